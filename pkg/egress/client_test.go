package egress_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// target is a real HTTP server on loopback that counts its requests.
type target struct {
	*httptest.Server
	hits atomic.Int32
}

func newTarget(t *testing.T, handler http.HandlerFunc) *target {
	t.Helper()
	s := &target{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func secretAnswer(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "victim-secret-bytes") }

func hostport(s *target) string { return strings.TrimPrefix(s.URL, "http://") }

// policy is the default networks and routes, allowing allowed.
func policy(t *testing.T, routes []string, allowed ...string) *egress.Policy {
	t.Helper()
	p, err := egress.Compile("namespace nsa", &proto.Egress{Refused: egress.Networks(), Allowed: allowed, Routes: routes})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// The client refuses a loopback server, naming the address and rule, and
// the server sees no request; allowed by address:port it answers.
func TestClientRefusesAndAllows(t *testing.T) {
	srv := newTarget(t, secretAnswer)
	body, err := get(t, policy(t, nil).Client(egress.ClientOptions{}), srv.URL+"/files/read")
	want := "egress to " + hostport(srv) + " refused: loopback (egress policy of namespace nsa)"
	if err == nil || !strings.HasSuffix(err.Error(), want) || !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("GET: %v, want an error ending %q", err, want)
	}
	if body != "" || srv.hits.Load() != 0 {
		t.Errorf("the refused server answered %q (%d requests)", body, srv.hits.Load())
	}
	body, err = get(t, policy(t, nil, hostport(srv)).Client(egress.ClientOptions{}), srv.URL+"/files/read")
	if err != nil || body != "victim-secret-bytes" {
		t.Errorf("allowed: %q, %v", body, err)
	}
}

// A name is checked where it is connected to: localhost resolves to
// loopback, and the dialer's check refuses it (the URL's text alone
// would not), on every address it resolves to.
func TestClientChecksResolvedAddresses(t *testing.T) {
	srv := newTarget(t, secretAnswer)
	_, port, _ := net.SplitHostPort(hostport(srv))
	_, err := get(t, policy(t, nil).Client(egress.ClientOptions{}), "http://localhost:"+port+"/")
	if err == nil || !strings.Contains(err.Error(), ":"+port+" refused: loopback (egress policy of namespace nsa)") {
		t.Errorf("GET localhost: %v, want loopback refused", err)
	}
	// The dialer alone, as the FTP client uses it.
	if _, err := policy(t, nil).DialContext(context.Background(), "tcp", "localhost:"+port); err == nil || !strings.Contains(err.Error(), "refused: loopback") {
		t.Errorf("DialContext localhost: %v", err)
	}
	if srv.hits.Load() != 0 {
		t.Errorf("%d requests reached the server", srv.hits.Load())
	}
}

// A redirect from an allowed server to a refused address is refused,
// saying it was a redirect; the refused server sees nothing. Without
// FollowRedirects the redirect is the answer.
func TestClientChecksRedirects(t *testing.T) {
	victim := newTarget(t, secretAnswer)
	allowed := newTarget(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, victim.URL+"/files/read?path=nsb", http.StatusFound)
	})
	p := policy(t, nil, hostport(allowed))
	body, err := get(t, p.Client(egress.ClientOptions{FollowRedirects: true}), allowed.URL+"/metrics")
	want := "redirect to " + victim.URL + "/files/read?path=nsb: egress to " + hostport(victim) + " refused: loopback (egress policy of namespace nsa)"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("GET: %v, want an error ending %q", err, want)
	}
	if strings.Contains(body, "victim") || victim.hits.Load() != 0 || allowed.hits.Load() != 1 {
		t.Errorf("body %q; the victim had %d requests, the allowed server %d", body, victim.hits.Load(), allowed.hits.Load())
	}
	resp, err := p.Client(egress.ClientOptions{}).Get(allowed.URL + "/metrics")
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("without FollowRedirects: %v, %v; want the 302", resp, err)
	}
	resp.Body.Close()
	if victim.hits.Load() != 0 {
		t.Error("the redirect was followed")
	}
}

// The scheduler's /files/ route passes to a refused endpoint; its other
// paths, a path cleaning out of /files/, and a redirect from /files/ to
// them do not.
func TestClientRoute(t *testing.T) {
	scheduler := newTarget(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/files/hop" {
			http.Redirect(w, r, "/debug/pprof/cmdline", http.StatusFound)
			return
		}
		io.WriteString(w, "served "+r.URL.Path)
	})
	p, err := egress.Compile("namespace nsa", &proto.Egress{
		Refused: egress.ControlPlane{Scheduler: []string{hostport(scheduler)}}.Refused(),
		Routes:  []string{scheduler.URL + "/files/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Client(egress.ClientOptions{FollowRedirects: true})
	if body, err := get(t, c, scheduler.URL+"/files/gamesvr.tar.gz"); err != nil || body != "served /files/gamesvr.tar.gz" {
		t.Errorf("a package: %q, %v", body, err)
	}
	hits := scheduler.hits.Load()
	for _, path := range []string{"/debug/pprof/cmdline", "/files/../v1/secrets", "/files/%2e%2e/v1/secrets", "/files/hop"} {
		body, err := get(t, c, scheduler.URL+path)
		if err == nil || !strings.Contains(err.Error(), "refused: the scheduler's API (egress policy of namespace nsa)") || strings.Contains(body, "served") {
			t.Errorf("%s: %q, %v; want the scheduler's API refused", path, body, err)
		}
	}
	if got := scheduler.hits.Load() - hits; got != 1 {
		t.Errorf("%d requests reached the scheduler, want 1: the /files/hop that redirected", got)
	}
}

// A health check may probe any port of its instance's agent, loopback
// in a dev cluster, but no control-plane endpoint: the probe policy keeps
// spec's endpoints and drops its networks, and refuses each agent's API
// endpoint as given (a dev cluster's are random ports). A refused probe
// connects nowhere; a host:port exception lifts an endpoint.
func TestProbes(t *testing.T) {
	instance, agent := newTarget(t, secretAnswer), newTarget(t, secretAnswer)
	spec := &proto.Egress{Refused: cluster.Refused(), Routes: []string{"http://10.0.0.2:8080/files/"}}
	p, err := egress.Probes("namespace nsa", spec, []string{hostport(agent), "", "not an endpoint"})
	if err != nil {
		t.Fatal(err)
	}
	if body, err := get(t, &http.Client{Transport: &http.Transport{DialContext: p.DialContext}}, instance.URL+"/"); err != nil || body != "victim-secret-bytes" {
		t.Errorf("the instance's own port on loopback: %q, %v; want it probed", body, err)
	}
	for addr, want := range map[string]string{
		hostport(agent):  "egress to " + hostport(agent) + " refused: a Mesos agent's API (egress policy of namespace nsa)",
		"127.0.0.1:5051": "egress to 127.0.0.1:5051 refused: a Mesos agent's API (egress policy of namespace nsa)",
		"10.0.0.3:5050":  "egress to 10.0.0.3:5050 refused: a Mesos master (egress policy of namespace nsa)",
		"10.0.0.4:2379":  "egress to 10.0.0.4:2379 refused: etcd (egress policy of namespace nsa)",
		"127.0.0.1:6060": "egress to 127.0.0.1:6060 refused: the scheduler's debug address (egress policy of namespace nsa)",
		"10.0.0.2:8080":  "egress to 10.0.0.2:8080 refused: the scheduler's API (egress policy of namespace nsa)",
	} {
		conn, err := p.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		if err == nil || err.Error() != want || !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Errorf("probe of %s: %v, want %q", addr, err, want)
		}
	}
	if agent.hits.Load() != 0 {
		t.Errorf("the agent had %d requests", agent.hits.Load())
	}
	spec.Allowed = []string{hostport(agent)}
	if p, err = egress.Probes("namespace nsa", spec, []string{hostport(agent)}); err != nil {
		t.Fatal(err)
	}
	conn, err := p.DialContext(context.Background(), "tcp", hostport(agent))
	if err != nil {
		t.Errorf("the agent allowed by host:port: %v", err)
	} else {
		conn.Close()
	}
	if _, err := egress.Probes("namespace nsa", nil, nil); err != nil {
		t.Fatalf("without a spec or agents: %v", err)
	}
}
