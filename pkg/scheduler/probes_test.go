package scheduler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The remote checks' probes reach any port of an agent's
// address but no agent's API (learnt as the driver hears of agents, also
// after a check started) and no endpoint the namespace's egress policy
// refuses; a refusal names the rule, and the refused server sees nothing.
func TestProbePoliciesSpareTheControlPlane(t *testing.T) {
	var hits atomic.Int32
	serve := func() string {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	instance, agent, later, master := serve(), serve(), serve(), serve()
	spec := &proto.Egress{Refused: egress.ControlPlane{Masters: []string{master}}.Refused()}
	probes := newProbePolicies(func(namespace string) *proto.Egress {
		if namespace == "nsa" {
			return spec
		}
		return nil
	})
	probes.learnAgent("S1", agent)
	probes.learnAgent("S0", "")
	dial := probes.dial("nsa")
	for addr, rule := range map[string]string{agent: "a Mesos agent's API", master: "a Mesos master"} {
		conn, err := dial(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		if want := "egress to " + addr + " refused: " + rule + " (egress policy of namespace nsa)"; err == nil || err.Error() != want {
			t.Errorf("probe of %s: %v, want %q", addr, err, want)
		}
	}
	probes.learnAgent("S2", later)
	if conn, err := dial(context.Background(), "tcp", later); err == nil || !strings.Contains(err.Error(), "a Mesos agent's API") {
		if conn != nil {
			conn.Close()
		}
		t.Errorf("an agent learnt after the check started: %v, want refused", err)
	}
	// Another namespace's policy refuses no master here, but every agent.
	if conn, err := probes.dial("nsb")(context.Background(), "tcp", agent); err == nil {
		conn.Close()
		t.Error("nsb probed an agent's API")
	}
	conn, err := dial(context.Background(), "tcp", instance)
	if err != nil {
		t.Fatalf("the instance's own port: %v", err)
	}
	conn.Close()
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the servers", hits.Load())
	}
	if _, err := (&http.Client{Transport: &http.Transport{DialContext: dial}}).Get("http://" + instance + "/"); err != nil || hits.Load() != 1 {
		t.Errorf("GET of the instance: %v, %d requests", err, hits.Load())
	}
}
