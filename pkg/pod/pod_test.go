package pod

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

const httpdScript = "exec httpd -f -p 8080 -h /www"

// Seed 001: the containers share one network; BRIDGE publishes hostPort,
// exported as PORT_<name>; files are written before start; $HOST /
// $BCS_POD_ID in a user env value take the injected value. The network is
// held by a network container that every business container joins
// (container:<id>), with the first task's hostname.
func TestBridgePodSharesNetwork(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	rec := &recorder{}
	cfg.OnUpdate = rec.add
	hostPort := freePort(t)

	web := containerTask("web", httpdScript)
	web.Spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080, HostPort: hostPort}}
	web.Spec.Env = []proto.EnvVar{{Name: "CONTAINERIP", Value: "$HOST"}, {Name: "RANDOMID", Value: "$BCS_POD_ID"}, {Name: "PLAIN", Value: "$OTHER"},
		{Name: "BRACED", Value: "${HOST}"}, {Name: "IFACE", Value: "$BCS_CNI_NAME"}, {Name: "URL", Value: "http://${HOST}:${PORT_http}/"}}
	web.Spec.Files = []proto.File{{Path: "/www/index.html", Content: []byte("hello from web\n"), ReadOnly: true}}
	web.Spec.Container.Hostname = "gamesvr"
	side := containerTask("side", "exec sleep 100000")

	p, err := New(cfg, []Task{web, side})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	if p.State() != taskstate.Running {
		t.Fatalf("pod state %s, want running", p.State())
	}
	for _, id := range []string{web.ID, side.ID} {
		if got := rec.states(id); !slices.Equal(got, []taskstate.State{taskstate.Starting, taskstate.Running}) {
			t.Errorf("task %q states %v, want [starting running]", id, got)
		}
	}

	// The side container reaches the web container on 127.0.0.1: one netns.
	res, err := p.Exec(ctxT(t, 30*time.Second), side.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
	if err != nil || res.ExitCode != 0 || res.Output != "hello from web\n" {
		t.Fatalf("side → 127.0.0.1:8080: %+v, %v", res, err)
	}
	// The host reaches it through the published hostPort.
	eventually(t, 10*time.Second, func() string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", hostPort))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "hello from web\n" {
			return fmt.Sprintf("host → hostPort: %q", body)
		}
		return ""
	})

	env, err := p.Exec(ctxT(t, 30*time.Second), web.ID, ExecRequest{Command: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("PORT_http=%d", hostPort), "BCS_POD_ID=" + cfg.PodID, "BCS_NODE_ADDR=127.0.0.1",
		"HOST=127.0.0.1", "CONTAINERIP=127.0.0.1", "RANDOMID=" + cfg.PodID, "PLAIN=$OTHER",
		"BRACED=127.0.0.1", "IFACE=", // CNM: no CNI interface name, an empty one
		fmt.Sprintf("URL=http://127.0.0.1:%d/", hostPort),
	} {
		if !strings.Contains(env.Output, want+"\n") {
			t.Errorf("env lacks %q:\n%s", want, env.Output)
		}
	}
	ls, _ := p.Exec(ctxT(t, 30*time.Second), web.ID, ExecRequest{Command: []string{"stat", "-c", "%a %U", "/www/index.html"}})
	if ls.Output != "400 root\n" { // read-only, and the container's user's alone
		t.Errorf("injected file mode/owner %q, want 400 root", ls.Output)
	}
	hn, _ := p.Exec(ctxT(t, 30*time.Second), side.ID, ExecRequest{Command: []string{"hostname"}})
	if hn.Output != "gamesvr\n" {
		t.Errorf("side hostname %q, want the first task's gamesvr", hn.Output)
	}
	r := readRecord(t, cfg)
	netIns, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: r.NetworkContainer})
	if err != nil || netIns.Config.Labels[LabelRole] != "network" || netIns.HostConfig.NetworkMode != "bridge" {
		t.Fatalf("network container %q: %+v, %v", r.NetworkContainer, netIns, err)
	}
	for _, id := range []string{web.ID, side.ID} {
		info, _ := p.Info(id)
		ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: info.ID})
		if err != nil || ins.HostConfig.NetworkMode != "container:"+netIns.ID || netns(t, info.Pid) != netns(t, netIns.State.Pid) {
			t.Errorf("task %q: network mode %q (%v), want container:%s and its netns", id, ins.HostConfig.NetworkMode, err, netIns.ID)
		}
	}

	webInfo, _ := p.Info(web.ID)
	sideInfo, _ := p.Info(side.ID)
	if webInfo.NetworkMode != "bridge" || webInfo.IPAddress != containerIP(netIns) || sideInfo.IPAddress != webInfo.IPAddress || sideInfo.Pid == 0 || sideInfo.Status != "running" {
		t.Errorf("container info: web %+v side %+v, want the network container's address %s", webInfo, sideInfo, containerIP(netIns))
	}

	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGTERM, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if p.State() != taskstate.Killed {
		t.Errorf("pod state %s after kill, want killed", p.State())
	}
	for _, ts := range p.Tasks() {
		if ts.State != taskstate.Killed {
			t.Errorf("task %q %s after kill, want killed", ts.TaskID, ts.State)
		}
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left after the pod ended", n)
	}
}

// Seed 001: if attaching to the first container's network or starting a
// later container fails, the whole task group fails.
func TestFailingSecondContainerFailsGroup(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	rec := &recorder{}
	cfg.OnUpdate = rec.add
	first := containerTask("first", "exec sleep 100000")
	second := containerTask("second", "")
	second.Spec.Container.Command, second.Spec.Container.Args = "/no/such/binary", nil

	p, err := New(cfg, []Task{first, second})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(ctxT(t, time.Minute))
	if err == nil || !strings.Contains(err.Error(), `task "task-second"`) {
		t.Fatalf("start error %v, want the second task's failure", err)
	}
	if st, _ := p.Wait(ctxT(t, 30*time.Second)); st != taskstate.Failed {
		t.Fatalf("pod %s, want failed", st)
	}
	for _, ts := range p.Tasks() {
		if ts.State != taskstate.Failed || !strings.Contains(ts.Message, "no/such/binary") {
			t.Errorf("task %q: %s %q, want failed naming the cause", ts.TaskID, ts.State, ts.Message)
		}
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left", n)
	}
}

// Seed 001: one task failing fails every task and kills every container.
func TestContainerExitKillsPod(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	long := containerTask("long", "exec sleep 100000")
	long.Spec.KillGracePeriodSeconds = 30 // the failure kill is immediate (SIGKILL)
	crash := containerTask("crash", "sleep 0.5; exit 3")
	p, err := New(cfg, []Task{long, crash})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := p.Wait(ctxT(t, 30*time.Second))
	if err != nil || st != taskstate.Failed {
		t.Fatalf("pod %s, %v; want failed", st, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("pod took %v to fail; the others must be killed at once", d)
	}
	tasks := p.Tasks()
	if tasks[1].State != taskstate.Failed || tasks[1].Info.ExitCode != 3 {
		t.Errorf("crash task %+v, want failed with exit code 3", tasks[1])
	}
	if tasks[0].State != taskstate.Failed || !strings.Contains(tasks[0].Message, `task "task-crash" failed`) {
		t.Errorf("long task %s %q, want failed because of task-crash", tasks[0].State, tasks[0].Message)
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left", n)
	}
}

// Seed 001: all containers exited (code 0) → the pod is done, finished.
func TestAllContainersExitFinishesPod(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	p, err := New(cfg, []Task{containerTask("a", "sleep 0.3"), containerTask("b", "exit 0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(ctxT(t, 30*time.Second)); err != nil || st != taskstate.Finished {
		t.Fatalf("pod %s, %v; want finished", st, err)
	}
	for _, ts := range p.Tasks() {
		if ts.State != taskstate.Finished {
			t.Errorf("task %q %s, want finished", ts.TaskID, ts.State)
		}
	}
}

// Kill policy: SIGTERM, then SIGKILL once killGracePeriodSeconds passed.
func TestKillGracePeriod(t *testing.T) {
	c := podtest.Docker(t)
	const grace = 1500 * time.Millisecond
	cases := []struct {
		name     string
		script   string
		min, max time.Duration
	}{
		// PID 1 without a TERM handler ignores SIGTERM: SIGKILL at grace.
		{"ignores-term", "exec sleep 100000", grace, grace + 2*time.Second},
		// A process that exits on SIGTERM ends long before the grace period.
		{"exits-on-term", "trap 'exit 0' TERM; while true; do sleep 0.05; done", 0, grace - 300*time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, c)
			task := containerTask("main", tc.script)
			task.Spec.KillGracePeriodSeconds = grace.Seconds()
			p, err := New(cfg, []Task{task})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctxT(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // let sh install its trap
			start := time.Now()
			if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGTERM, -1); err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			if d < tc.min || d > tc.max {
				t.Errorf("kill took %v, want within [%v, %v]", d, tc.min, tc.max)
			}
			if st := p.Tasks()[0].State; st != taskstate.Killed {
				t.Errorf("task %s, want killed", st)
			}
		})
	}
}

// Seed 001: dockerd unreachable → every task fails with a clear message.
func TestDockerdUnreachableFailsEveryTask(t *testing.T) {
	c, err := docker.NewClient("unix:///nonexistent/docker.sock")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Docker: c, PodID: "unreachable", SandboxDir: t.TempDir()}
	p, err := New(cfg, []Task{containerTask("a", "true"), containerTask("b", "true")})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(ctxT(t, 30*time.Second))
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "cannot reach dockerd") {
		t.Fatalf("start: %v, want unavailable naming dockerd", err)
	}
	for _, ts := range p.Tasks() {
		if ts.State != taskstate.Failed || !strings.Contains(ts.Message, "cannot reach dockerd (unix:///nonexistent/docker.sock)") {
			t.Errorf("task %q: %s %q", ts.TaskID, ts.State, ts.Message)
		}
	}
	if st, _ := p.Wait(ctxT(t, 10*time.Second)); st != taskstate.Failed {
		t.Errorf("pod %s, want failed", st)
	}
}

// imagePullPolicy: IfNotPresent uses the local image (covered by every
// test); Always must pull, and with no registry reachable fails clearly.
func TestPullPolicyAlwaysWithoutRegistryFails(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	task := containerTask("a", "true")
	task.Spec.Container.PullPolicy = "Always"
	task.Spec.Container.PullUser, task.Spec.Container.PullPassword = "u", "p"
	p, err := New(cfg, []Task{task})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start(ctxT(t, 2*time.Minute))
	if err == nil || !strings.Contains(err.Error(), `pull image "bcs-test/busybox:latest" (policy Always)`) {
		t.Fatalf("start: %v, want a pull failure", err)
	}
	if ts := p.Tasks()[0]; ts.State != taskstate.Failed || !strings.Contains(ts.Message, "pull image") {
		t.Errorf("task %s %q", ts.State, ts.Message)
	}
}

// In-place operations of the scheduler's messages (proto.Message): exec,
// signal, update-file, update-resources, restart one container keeping the
// pod and its network.
func TestInPlaceOperations(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	owner := containerTask("owner", httpdScript)
	owner.Spec.Files = []proto.File{{Path: "/www/index.html", Content: []byte("owner\n")}}
	worker := containerTask("worker", "trap 'echo usr1 > /tmp/sig' USR1; while true; do sleep 0.05; done")
	p, err := New(cfg, []Task{owner, worker})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(ctxT(t, 30*time.Second), syscall.SIGKILL, 0) })

	res, err := p.Exec(ctxT(t, 30*time.Second), worker.ID, ExecRequest{Command: []string{"sh", "-c", "echo out; echo err >&2; exit 4"}})
	if err != nil || res.ExitCode != 4 || !strings.Contains(res.Output, "out\n") || !strings.Contains(res.Output, "err\n") {
		t.Errorf("exec: %+v, %v", res, err)
	}

	time.Sleep(200 * time.Millisecond)
	if err := p.Signal(ctxT(t, 10*time.Second), worker.ID, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() string {
		res, _ := p.Exec(ctxT(t, 10*time.Second), worker.ID, ExecRequest{Command: []string{"cat", "/tmp/sig"}})
		if res.Output != "usr1\n" {
			return fmt.Sprintf("signal not delivered: %+v", res)
		}
		return ""
	})

	if err := p.WriteFiles(ctxT(t, 10*time.Second), worker.ID, []proto.File{{Path: "/etc/app/live.conf", Content: []byte("v2\n")}}); err != nil {
		t.Fatal(err)
	}
	if res, _ := p.Exec(ctxT(t, 10*time.Second), worker.ID, ExecRequest{Command: []string{"cat", "/etc/app/live.conf"}}); res.Output != "v2\n" {
		t.Errorf("file written into the running container: %q", res.Output)
	}

	if err := p.UpdateResources(ctxT(t, 10*time.Second), worker.ID, proto.Resources{CPUs: 0.5, CPULimit: 1, MemMB: 128}); err != nil {
		t.Fatal(err)
	}
	before, _ := p.Info(worker.ID)
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: before.ID})
	if err != nil {
		t.Fatal(err)
	}
	if ins.HostConfig.Memory != 128<<20 || ins.HostConfig.CPUShares != 512 || ins.HostConfig.CPUQuota != 100000 {
		t.Errorf("after update: memory %d shares %d quota %d", ins.HostConfig.Memory, ins.HostConfig.CPUShares, ins.HostConfig.CPUQuota)
	}

	// The first container restarts in place too: the network container
	// holds the pod's network, so the worker keeps it.
	ownerBefore, _ := p.Info(owner.ID)
	if err := p.Restart(ctxT(t, 30*time.Second), owner.ID); err != nil {
		t.Fatalf("restart of the first container: %v", err)
	}
	if now, _ := p.Info(owner.ID); now.ID != ownerBefore.ID || now.Pid == ownerBefore.Pid || now.IPAddress != ownerBefore.IPAddress {
		t.Errorf("restart of the first container: before %+v after %+v", ownerBefore, now)
	}
	if now, _ := p.Info(worker.ID); now.Pid != before.Pid {
		t.Errorf("the worker restarted with the first container: pid %d → %d", before.Pid, now.Pid)
	}
	eventually(t, 10*time.Second, func() string {
		res, err := p.Exec(ctxT(t, 10*time.Second), worker.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
		if err != nil || res.Output != "owner\n" {
			return fmt.Sprintf("worker → restarted first container: %+v, %v", res, err)
		}
		return ""
	})
	if err := p.Restart(ctxT(t, 30*time.Second), worker.ID); err != nil {
		t.Fatal(err)
	}
	after, _ := p.Info(worker.ID)
	if after.ID != before.ID || !after.StartAt.After(before.StartAt) || after.Status != "running" {
		t.Errorf("restart: before %+v after %+v", before, after)
	}
	time.Sleep(300 * time.Millisecond) // the old container's wait returns
	if p.State() != taskstate.Running || p.Tasks()[1].State != taskstate.Running {
		t.Fatalf("after restart: pod %s worker %s, want running", p.State(), p.Tasks()[1].State)
	}
	res, err = p.Exec(ctxT(t, 30*time.Second), worker.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
	if err != nil || res.Output != "owner\n" {
		t.Errorf("restarted worker lost the pod network: %+v, %v", res, err)
	}
}
