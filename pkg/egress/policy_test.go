package egress_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// cluster is a control plane as bcs-scheduler names it.
var cluster = egress.ControlPlane{
	Scheduler:  []string{"10.0.0.2:8080", "bcs.example:8080"},
	Debug:      []string{"127.0.0.1:6060"},
	Masters:    []string{"10.0.0.3:5050"},
	AgentPorts: []int{5051},
	Etcd:       []string{"10.0.0.4:2379", "10.0.0.4:2380"},
}

func compile(t *testing.T, allowed ...string) *egress.Policy {
	t.Helper()
	p, err := egress.Compile("namespace nsa", &proto.Egress{Refused: cluster.Refused(), Allowed: allowed,
		Routes: []string{"http://10.0.0.2:8080/files/"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Which URL each rule refuses, and what the allowed exceptions lift: a
// network or address lifts a network's refusal, only host:port lifts an
// endpoint's; the scheduler's /files/ route passes, its other paths and
// a path that cleans out of /files/ do not.
func TestCheckURL(t *testing.T) {
	cases := []struct {
		name, url string
		allowed   []string
		refused   string // the message; "" lets it through
	}{
		{"loopback", "http://127.0.0.1:5051/files/read?path=/x", nil, "egress to 127.0.0.1:5051 refused: a Mesos agent's API (egress policy of namespace nsa)"},
		{"loopback, another port", "http://127.0.0.1:9090/", nil, "egress to 127.0.0.1:9090 refused: loopback (egress policy of namespace nsa)"},
		{"IPv6 loopback", "http://[::1]:9090/", nil, "egress to [::1]:9090 refused: loopback"},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:9090/", nil, "egress to 127.0.0.1:9090 refused: loopback"},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", nil, "egress to 169.254.169.254:80 refused: link-local"},
		{"IPv6 link-local with a zone", "http://[fe80::1%25eth0]:80/", nil, "egress to [fe80::1]:80 refused: link-local"},
		{"unspecified", "http://0.0.0.0:8080/", nil, "egress to 0.0.0.0:8080 refused: unspecified address"},
		{"the master", "http://10.0.0.3:5050/api/v1", nil, "egress to 10.0.0.3:5050 refused: a Mesos master"},
		{"an agent, any address", "http://10.9.9.9:5051/files/read", nil, "egress to 10.9.9.9:5051 refused: a Mesos agent's API"},
		{"etcd peer", "https://10.0.0.4:2380/members", nil, "egress to 10.0.0.4:2380 refused: etcd"},
		{"the scheduler by name", "http://BCS.example.:8080/v1/secrets", nil, "egress to bcs.example:8080 refused: the scheduler's API"},
		{"the scheduler's packages", "http://10.0.0.2:8080/files/gamesvr.tar.gz", nil, ""},
		{"out of /files/ by ..", "http://10.0.0.2:8080/files/../v1/secrets", nil, "egress to 10.0.0.2:8080 refused: the scheduler's API"},
		{"out of /files/ by %2e%2e", "http://10.0.0.2:8080/files/%2e%2e/debug/pprof/", nil, "egress to 10.0.0.2:8080 refused: the scheduler's API"},
		{"the route is http://", "https://10.0.0.2:8080/files/x", nil, "refused: the scheduler's API"},
		{"a tenant's service", "http://10.1.2.3:9090/metrics", nil, ""},
		{"the master's machine, another port", "http://10.0.0.3:9090/", nil, ""},
		{"loopback allowed by address:port", "http://127.0.0.1:9090/", []string{"127.0.0.1:9090"}, ""},
		{"loopback allowed by network", "http://127.0.0.1:9090/", []string{"127.0.0.0/8"}, ""},
		{"loopback, not the allowed port", "http://127.0.0.1:9091/", []string{"127.0.0.1:9090"}, "refused: loopback"},
		{"a network does not open an endpoint", "http://10.0.0.3:5050/", []string{"10.0.0.0/8"}, "refused: a Mesos master"},
		{"an address does not open an endpoint", "http://127.0.0.1:6060/debug/pprof/", []string{"127.0.0.1"}, "refused: the scheduler's debug address"},
		{"host:port opens an endpoint", "http://10.0.0.3:5050/", []string{"10.0.0.3:5050"}, ""},
		{"an agent's port opened on one address", "http://10.1.2.3:5051/", []string{"10.1.2.3:5051"}, ""},
		{"an agent's port on another", "http://10.1.2.4:5051/", []string{"10.1.2.3:5051"}, "refused: a Mesos agent's API"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := url.Parse(c.url)
			if err != nil {
				t.Fatal(err)
			}
			err = compile(t, c.allowed...).Check(context.Background(), u)
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("%s: %v, want it let through", c.url, err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Errorf("%s: %v, want %q", c.url, err, c.refused)
			case c.refused != "" && !errors.Is(err, errdefs.ErrPermissionDenied):
				t.Errorf("%s: %v is not ErrPermissionDenied", c.url, err)
			}
		})
	}
}

// A name is checked as the addresses it resolves to: localhost is
// loopback; a name:port entry lifts that for the name and port only.
func TestCheckResolvesNames(t *testing.T) {
	u, _ := url.Parse("http://localhost:9090/")
	err := compile(t).Check(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), "egress to 127.0.0.1:9090 refused: loopback (egress policy of namespace nsa)") {
		t.Errorf("localhost: %v, want loopback refused", err)
	}
	if err := compile(t, "localhost:9090").Check(context.Background(), u); err != nil {
		t.Errorf("localhost allowed by name:port: %v", err)
	}
	other, _ := url.Parse("http://127.0.0.1:9090/")
	if err := compile(t, "localhost:9090").Check(context.Background(), other); err == nil {
		t.Error("127.0.0.1:9090 let through by the entry localhost:9090: a name lifts only what is reached by that name")
	}
}

// Bad entries are errors naming them; CheckAllowed says what an
// admission policy's entry must look like.
func TestCompileNamesBadEntries(t *testing.T) {
	_, err := egress.Compile("namespace nsa", &proto.Egress{
		Refused: []proto.EgressRule{{Name: "x", Networks: []string{"10.0.0.0/33"}, Endpoints: []string{"10.0.0.1"}}},
		Allowed: []string{"prometheus.monitoring"},
		Routes:  []string{"http://10.0.0.2:8080/files"},
	})
	for _, want := range []string{`refused[0].networks[0] "10.0.0.0/33"`, `refused[0].endpoints[0] "10.0.0.1": want host:port`,
		`allowed[0] "prometheus.monitoring": a name needs its port`, `routes[0] "http://10.0.0.2:8080/files"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to name %s", err, want)
		}
	}
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("%v is not ErrInvalidArgument", err)
	}
	for entry, ok := range map[string]bool{
		"10.1.0.0/16": true, "10.1.2.3": true, "::1": true, "127.0.0.1:9090": true, "[::1]:9090": true,
		"prometheus.monitoring:9090": true, "prometheus.monitoring": false, "10.1.2.3:0": false, "10.1.2.3:70000": false,
		"*:9090": false, "http://x:1": false, "": false, "a b:80": false,
	} {
		if err := egress.CheckAllowed(entry); (err == nil) != ok {
			t.Errorf("CheckAllowed(%q) = %v", entry, err)
		}
	}
}

// A namespace without its own list takes the default's; each policy's
// errors name it.
func TestSet(t *testing.T) {
	set, err := egress.NewSet(cluster.Refused(), nil, map[string][]string{"": {"127.0.0.1:9090"}, "nsb": {"10.1.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Spec("nsa").Allowed; len(got) != 1 || got[0] != "127.0.0.1:9090" {
		t.Errorf("nsa's spec allows %v, want the default's", got)
	}
	if got := set.Spec("nsb").Allowed; len(got) != 1 || got[0] != "10.1.0.0/16" {
		t.Errorf("nsb's spec allows %v", got)
	}
	u, _ := url.Parse("http://127.0.0.1:9090/")
	if err := set.Policy("nsa").Check(context.Background(), u); err != nil {
		t.Errorf("nsa: %v", err)
	}
	err = set.Policy("nsb").Check(context.Background(), u)
	if err == nil || !strings.HasSuffix(err.Error(), "refused: loopback (egress policy of namespace nsb)") {
		t.Errorf("nsb: %v", err)
	}
	master, _ := url.Parse("http://10.0.0.3:5050/api/v1")
	err = set.Default("notify callbacks").Check(context.Background(), master)
	if err == nil || err.Error() != "egress to 10.0.0.3:5050 refused: a Mesos master (egress policy of default, for notify callbacks)" {
		t.Errorf("callback: %v", err)
	}
	if _, err := egress.NewSet(cluster.Refused(), nil, map[string][]string{"nsc": {"bad entry"}}); err == nil || !strings.Contains(err.Error(), `namespace nsc: allowed[0] "bad entry"`) {
		t.Errorf("a bad entry: %v", err)
	}
}
