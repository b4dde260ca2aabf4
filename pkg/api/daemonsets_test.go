package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

func daemonset(name, ns string) *manifest.Daemonset {
	d := manifesttest.Daemonset()
	d.Metadata.Name, d.Metadata.Namespace = name, ns
	d.Spec.Template.Metadata.Namespace = ns
	d.Spec.Template.Spec.Containers[0].Secrets = nil
	d.Spec.Template.Spec.Containers[0].ConfigMaps = nil
	return d
}

// A daemonset is a workload at /v1/daemonsets, its desired
// count the scheduler's; it cannot be scaled, and a manifest with a count
// or surge is a 400 naming the field that stores nothing.
func TestDaemonsetCRUD(t *testing.T) {
	e := newEnv(t)
	var created api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/daemonsets", daemonset("logs", "ns-a"), &created)
	if created.Kind != manifest.KindDaemonset || created.Version != 1 || created.Instances != 0 || created.Status.State != "Deploying" {
		t.Errorf("created %+v", created)
	}
	errorOf(t, e.call(t, "POST", "/v1/daemonsets", deployment("game", "ns-a")), http.StatusBadRequest, "InvalidArgument")
	got := errorOf(t, e.call(t, "GET", "/v1/deployments/ns-a/logs", nil), http.StatusNotFound, "NotFound")
	if !strings.Contains(got.Message, "ns-a/logs is a daemonset, served at /v1/daemonsets/ns-a/logs") {
		t.Errorf("cross-route GET: %q", got.Message)
	}
	var list map[string][]api.AppView
	e.expect(t, http.StatusOK, "GET", "/v1/daemonsets", nil, &list)
	if len(list["daemonsets"]) != 1 || list["daemonsets"][0].Name != "logs" {
		t.Errorf("daemonsets %+v", list)
	}

	got = errorOf(t, e.call(t, "POST", "/v1/daemonsets/ns-a/logs/scale", map[string]int{"instances": 5}), http.StatusBadRequest, "InvalidArgument")
	if !strings.Contains(got.Message, "is a daemonset") {
		t.Errorf("scale: %q", got.Message)
	}
	surge := daemonset("logs", "ns-a")
	surge.Spec.UpdateStrategy.MaxSurge = manifest.Count(1)
	got = errorOf(t, e.call(t, "PUT", "/v1/daemonsets/ns-a/logs", surge), http.StatusBadRequest, "InvalidArgument")
	if !slices.ContainsFunc(got.Details, func(d string) bool { return strings.HasPrefix(d, "spec.updateStrategy.maxSurge: ") }) {
		t.Errorf("maxSurge details %q", got.Details)
	}
	// The original's daemonsets carried spec.instance and ignored it: it
	// is accepted and dropped, the agents deciding the count.
	counted := daemonset("other", "ns-a")
	counted.Spec.Instance = 2
	var other api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/daemonsets", counted, &other)
	if strings.Contains(string(other.Spec), `"instance"`) || len(other.Status.Instances) != 0 {
		t.Errorf("a daemonset with spec.instance 2: %s", other.Spec)
	}

	changed := daemonset("logs", "ns-a")
	changed.Spec.Template.Spec.Containers[0].Image = "logs:v2"
	var put api.AppView
	e.expect(t, http.StatusOK, "PUT", "/v1/daemonsets/ns-a/logs", changed, &put)
	if put.Version != 2 {
		t.Errorf("PUT version %d", put.Version)
	}
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/daemonsets/ns-a/logs", nil, nil)
}
