package podruntime

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Where HTTP and TCP checks connect, per network mode (seed 000 port rule,
// proto.HealthCheck): BRIDGE uses the published hostPort when > 0, else
// the containerPort on the container's address; HOST shares the node's
// network; CNI and USER reach the container's own address.
func TestCheckTarget(t *testing.T) {
	spec := &proto.TaskSpec{Ports: []proto.Port{
		{Name: "published", ContainerPort: 8080, HostPort: 31001},
		{Name: "inside", ContainerPort: 9090},
		{Name: "hostonly", HostPort: 31002},
	}}
	info := proto.ContainerInfo{Name: "c", IPAddress: "172.17.0.5"}
	for _, tc := range []struct {
		name     string
		network  string
		bindIP   string
		check    proto.HealthCheck
		info     proto.ContainerInfo
		wantHost string
		wantPort int
		wantErr  bool
	}{
		{name: "bridge hostPort", network: "BRIDGE", check: proto.HealthCheck{PortName: "published"}, wantHost: "10.0.0.1", wantPort: 31001},
		{name: "bridge hostPort on bind ip", network: "BRIDGE", bindIP: "127.0.0.1", check: proto.HealthCheck{PortName: "published"}, wantHost: "127.0.0.1", wantPort: 31001},
		{name: "bridge bind all is the node", network: "BRIDGE", bindIP: "0.0.0.0", check: proto.HealthCheck{PortName: "published"}, wantHost: "10.0.0.1", wantPort: 31001},
		{name: "bridge no hostPort", network: "BRIDGE", check: proto.HealthCheck{PortName: "inside"}, wantHost: "172.17.0.5", wantPort: 9090},
		{name: "bridge explicit port", network: "BRIDGE", check: proto.HealthCheck{Port: 7000}, wantHost: "172.17.0.5", wantPort: 7000},
		{name: "host containerPort", network: "HOST", check: proto.HealthCheck{PortName: "published"}, wantHost: "10.0.0.1", wantPort: 8080},
		{name: "host random port", network: "HOST", check: proto.HealthCheck{PortName: "hostonly"}, wantHost: "10.0.0.1", wantPort: 31002},
		{name: "host explicit port", network: "HOST", check: proto.HealthCheck{Port: 7000}, wantHost: "10.0.0.1", wantPort: 7000},
		{name: "cni containerPort", network: "CNI", check: proto.HealthCheck{PortName: "published"}, wantHost: "172.17.0.5", wantPort: 8080},
		{name: "user containerPort", network: "USER", check: proto.HealthCheck{PortName: "inside"}, wantHost: "172.17.0.5", wantPort: 9090},
		{name: "no container address", network: "CNI", check: proto.HealthCheck{PortName: "inside"}, info: proto.ContainerInfo{Name: "c"}, wantErr: true},
		{name: "unknown port name", network: "BRIDGE", check: proto.HealthCheck{PortName: "nope"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &group{rt: &Runtime{cfg: Config{NodeAddr: "10.0.0.1", PortBindIP: tc.bindIP}}, network: tc.network}
			in := info
			if tc.info != (proto.ContainerInfo{}) {
				in = tc.info
			}
			host, port, err := g.target(spec, tc.check, in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %s:%d, want an error", host, port)
				}
				return
			}
			if err != nil || host != tc.wantHost || port != tc.wantPort {
				t.Fatalf("got %s:%d (%v), want %s:%d", host, port, err, tc.wantHost, tc.wantPort)
			}
		})
	}
}

// The owner file names a live process only while it runs (pid reuse is
// caught by the start time).
func TestOwnerAlive(t *testing.T) {
	dir := t.TempDir()
	if ownerAlive(dir) {
		t.Error("no owner file: alive")
	}
	if err := writeOwner(dir); err != nil {
		t.Fatal(err)
	}
	if !ownerAlive(dir) {
		t.Error("this process: not alive")
	}
	for _, body := range []string{`{"pid": 1, "startTime": "0"}`, `{"pid": 999999999, "startTime": "1"}`, `garbage`} {
		if err := writeFile(dir, OwnerFile, body); err != nil {
			t.Fatal(err)
		}
		if ownerAlive(dir) {
			t.Errorf("owner %s: alive", body)
		}
	}
}

func writeFile(dir, name, body string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
}

// Pod IDs name containers and state files: the executor ID made
// docker-safe, then ".2", ".3" for later groups of the same executor.
func TestPodIDs(t *testing.T) {
	for _, tc := range []struct {
		exec string
		want []string
	}{
		{"ns_app_0_1", []string{"ns_app_0_1", "ns_app_0_1.2", "ns_app_0_1.3"}},
		{"ns/app:0", []string{"ns-app-0", "ns-app-0.2"}},
		{"-x", []string{"x-x"}},
	} {
		r := &Runtime{cfg: Config{ExecutorID: tc.exec}}
		for i, want := range tc.want {
			if got := r.nextPodIDLocked(); got != want {
				t.Errorf("executor %q group %d: pod ID %q, want %q", tc.exec, i+1, got, want)
			}
			r.groups = append(r.groups, &group{})
		}
	}
}

// A HOST container's checks probe the node's address, any port
// of it but the control plane's: its agent's API (Config.AgentEndpoint)
// and the endpoints its spec's egress policy refuses fail the check
// without connecting, naming the rule.
func TestHostChecksSpareTheControlPlane(t *testing.T) {
	serve := func() (port int, hits *atomic.Int32) {
		hits = new(atomic.Int32)
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().(*net.TCPAddr).Port, hits
	}
	agent, agentHits := serve()
	master, masterHits := serve()
	for _, tc := range []struct {
		name  string
		check proto.HealthCheck
		want  string
	}{
		{"HTTP at the agent's API", proto.HealthCheck{Type: "HTTP", Port: agent, Path: "/files/debug"},
			fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos agent's API", agent)},
		{"TCP at the master", proto.HealthCheck{Type: "TCP", Port: master},
			fmt.Sprintf("egress to 127.0.0.1:%d refused: a Mesos master", master)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := podtest.Docker(t)
			rt, _ := newRuntime(t, c, func(cfg *Config) { cfg.AgentEndpoint = fmt.Sprintf("127.0.0.1:%d", agent) })
			rep := newReporter(t)
			task := containerTask("host.0", "host", "exec sleep 100000")
			task.Spec.Container.NetworkMode = pod.NetworkHost
			task.Spec.Egress = &proto.Egress{Refused: egress.ControlPlane{Masters: []string{fmt.Sprintf("127.0.0.1:%d", master)}}.Refused()}
			check := fastCheck(tc.check.Type)
			check.Port, check.Path = tc.check.Port, tc.check.Path
			task.Spec.HealthChecks = []proto.HealthCheck{check}
			rt.Launch(context.Background(), []executor.Task{task}, rep)
			if f := rep.awaitState(task.ID(), taskstate.Failed); !strings.Contains(f.Message, tc.want) {
				t.Errorf("FAILED message %q, want it to name %q", f.Message, tc.want)
			}
			waitDone(t, rt)
		})
	}
	if agentHits.Load() != 0 || masterHits.Load() != 0 {
		t.Errorf("the agent had %d requests, the master %d", agentHits.Load(), masterHits.Load())
	}
}
