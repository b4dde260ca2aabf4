package schedulerd

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/admission"
)

// The egress policies refuse what this replica knows of the control
// plane — its API on every address of this machine for a wildcard
// listen, its advertised name, the debug address, a master by name and
// by what the name resolves to, the agents' port anywhere, etcd — and
// let through the namespace's exceptions and the scheduler's /files/,
// which ${scheduler_url} names.
func TestEgressPoliciesRefuseTheControlPlane(t *testing.T) {
	ctx := context.Background()
	cp := controlPlane{
		api:        &net.TCPAddr{IP: net.IPv4zero, Port: 8080},
		self:       "http://127.0.0.1:8080",
		debug:      "127.0.0.1:6060",
		masters:    []string{"http://localhost:5050"},
		etcd:       []string{"http://10.0.0.4:2379", "http://10.0.0.4:2380"},
		agentPorts: []int{5051},
	}
	policy := admission.Policy{Default: admission.Rules{Egress: []string{"127.0.0.1:9090"}},
		Namespaces: map[string]admission.Rules{"nsb": {Egress: []string{"10.1.0.0/16"}}}}
	set, known, err := egressPolicies(ctx, cp, policy, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	addrs, _ := net.InterfaceAddrs()
	if len(known.Scheduler) < len(addrs) {
		t.Errorf("the scheduler's endpoints %v: want each of this machine's %d addresses with port 8080", known.Scheduler, len(addrs))
	}
	var machine string // an address of this machine that is not loopback
	for _, a := range addrs {
		if ipNet, ok := a.(*net.IPNet); ok && !ipNet.IP.IsLoopback() && ipNet.IP.To4() != nil {
			machine = ipNet.IP.String()
		}
	}
	for raw, want := range map[string]string{
		"http://" + machine + ":8080/v1/secrets":  "refused: the scheduler's API (egress policy of namespace nsa)",
		"http://127.0.0.1:8080/v1/secrets":        "refused: the scheduler's API",
		"http://127.0.0.1:8080/files/gamesvr.tgz": "",
		"http://127.0.0.1:6060/debug/pprof/":      "refused: the scheduler's debug address",
		"http://localhost:5050/api/v1":            "refused: a Mesos master",
		"http://127.0.0.1:5050/api/v1":            "refused: a Mesos master",
		"http://10.9.9.9:5051/files/read":         "refused: a Mesos agent's API",
		"http://10.0.0.4:2380/members":            "refused: etcd",
		"http://127.0.0.1:9090/api/v1/query":      "",
		"http://127.0.0.1:9091/":                  "refused: loopback",
		"http://169.254.169.254/latest/meta-data": "refused: link-local",
	} {
		u, _ := url.Parse(raw)
		err := set.Policy("nsa").Check(ctx, u)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	// nsb has its own list: the default's exception is not its.
	u, _ := url.Parse("http://127.0.0.1:9090/")
	if err := set.Policy("nsb").Check(ctx, u); err == nil || !strings.Contains(err.Error(), "refused: loopback (egress policy of namespace nsb)") {
		t.Errorf("nsb: %v", err)
	}
	if spec := set.Spec("nsb"); len(spec.Allowed) != 1 || spec.Routes[0] != "http://127.0.0.1:8080/files/" {
		t.Errorf("nsb's spec %+v", spec)
	}
}
