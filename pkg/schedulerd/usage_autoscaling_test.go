package schedulerd_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
)

// burner is a deployment of one process that spins, limited to a tenth
// of a core: it uses all it requests.
const burner = `{"apiVersion": "v4", "kind": "deployment", "metadata": {"name": "burner", "namespace": "ns-a"},
 "killPolicy": {"gracePeriod": 1},
 "spec": {"instance": 1, "template": {"spec": {"processes": [{"procName": "burner",
  "workPath": "${work_base_dir}/${namespace}.${processname}.${instanceid}",
  "pidFile": "${run_base_dir}/${namespace}.${processname}.${instanceid}/burner.pid",
  "startCmd": "mkdir -p $(dirname ${pidFile}) && cp /bin/sh ./burner && echo $$ >${pidFile} && exec ./burner -c 'while :; do :; done'",
  "resources": {"limits": {"cpu": "0.1", "memory": "16"}}}]}}}}`

// cpuOfBurner keeps burner's cpu at half its request, deciding every 5 s.
const cpuOfBurner = `{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "burner", "namespace": "ns-a"},
 "spec": {"target": {"kind": "deployment", "name": "burner"}, "minReplicas": 1, "maxReplicas": 2, "intervalSeconds": 5,
  "metrics": [{"type": "resource", "resource": {"name": "cpu", "targetAverageUtilization": 50}}]}}`

// A resource metric reads the use the process executor measures in its
// cgroups: the controller turns on the usage reports of the workload it
// targets, the reports come every second, the status shows the cpu in
// use and the spinning deployment grows to its maximum.
func TestAutoscalerScalesOnCPU(t *testing.T) {
	api := startDevSchedulerWith(t, "", func(o *schedulerd.Options) { o.Scheduler.UsageInterval = time.Second })
	const path = "/v1/deployments/ns-a/burner"
	call(t, "POST", api+"/v1/deployments", burner, http.StatusCreated)
	runningInstances(t, api+path, 0)
	call(t, "POST", api+"/v1/autoscalers", cpuOfBurner, http.StatusCreated)
	runningInstances(t, api+path, 0, 1)

	var view apiv1.AutoscalerView
	getJSON(t, api+"/v1/autoscalers/ns-a/burner", &view)
	last := view.Status.LastScale
	if last == nil || last.From != 1 || last.To != 2 {
		t.Fatalf("last scale %+v, want 1 → 2", last)
	}
	shown := metricShown(view.Status, "cpu")
	if used, err := strconv.ParseFloat(shown, 64); err != nil || used <= 50 {
		t.Errorf("the cpu metric shows %q, want a utilization above its target of 50 %%", shown)
	}

}
