package hookrun_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// A run's calls hold to its namespace's egress policy: a web metric and
// a Prometheus metric at a loopback server (as an agent's /files/read
// is on a dev cluster), and a web metric at an allowed server that
// redirects there, each end in Error naming the address, the rule and
// the namespace; the refused server sees no request, and no byte of its
// answer is in the run.
func TestCallsHoldToTheEgressPolicy(t *testing.T) {
	e := newEnv(t)
	const secret = "nsb-configmap-content"
	victim := newHookServer(t, answerWith(`{"age":12,"data":"`+secret+`"}`))
	allowed := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, victim.URL+"/files/read?path=nsb", http.StatusFound)
	})
	allowedHost := strings.TrimPrefix(allowed.URL, "http://")
	e.egress = egressSet(t, allowedHost) // the allowed server only, by host:port
	victimHost := strings.TrimPrefix(victim.URL, "http://")
	refused := "egress to " + victimHost + " refused: loopback (egress policy of namespace " + ns + ")"
	cases := []struct {
		run     string
		metric  manifest.HookMetric
		message string
	}{
		{"web", webMetric(victim.URL+"/files/read?path=nsb", manifest.HookMetric{Name: "m"}),
			"GET " + victim.URL + "/files/read?path=nsb: " + refused},
		{"prometheus", manifest.HookMetric{Name: "m", Provider: manifest.HookProvider{
			Prometheus: &manifest.PrometheusProvider{Address: victim.URL, Query: "up"}}},
			"prometheus " + victim.URL + ": query up: Post \"" + victim.URL + "/api/v1/query\": " + refused},
		{"redirect", webMetric(allowed.URL+"/metrics", manifest.HookMetric{Name: "m"}),
			"GET " + allowed.URL + "/metrics: redirect to " + victim.URL + "/files/read?path=nsb: " + refused},
	}
	e.startRunner(nil)
	for _, c := range cases {
		c.metric.ConsecutiveErrorLimit = limit(0)
		tmpl := &manifest.HookTemplate{APIVersion: "v4", KindName: "hooktemplate",
			Metadata: manifest.ObjectMeta{Name: c.run, Namespace: ns}, Spec: manifest.HookTemplateSpec{Metrics: []manifest.HookMetric{c.metric}}}
		if _, err := e.reg.PutObject(t.Context(), tmpl, -1); err != nil {
			t.Fatal(err)
		}
		e.createRunOf(c.run, c.run)
	}
	for _, c := range cases {
		run := e.waitPhase(c.run, hook.Error)
		if want := "metric m erred: " + c.message; run.Status.Message != want {
			t.Errorf("%s: message %q, want %q", c.run, run.Status.Message, want)
		}
		if record, _ := json.Marshal(run); strings.Contains(string(record), secret) {
			t.Errorf("%s: the run holds the refused server's answer: %s", c.run, record)
		}
	}
	if victim.calls() != 0 || allowed.calls() != 1 {
		t.Errorf("the refused server had %d requests, the allowed one %d; want 0 and 1", victim.calls(), allowed.calls())
	}
}
