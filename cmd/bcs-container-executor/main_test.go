package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/numa"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

const httpdScript = "mkdir -p /www && echo ok > /www/health && exec httpd -f -p 8080 -h /www"

// e2e is a dev cluster with one agent running real executors, a
// subscribed framework, the executor binary and a docker client.
type e2e struct {
	c           *devcluster.Cluster
	f           *devclustertest.Framework
	docker      *docker.Client
	executorBin string
	label       string
	numaState   string
	sysfsRoot   string
	extraArgs   string // more executor flags
}

var nonName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func setup(t *testing.T) *e2e {
	t.Helper()
	e := &e2e{}
	var err error
	if e.docker, err = docker.NewClient("unix:///var/run/docker.sock"); err != nil {
		t.Fatal(err)
	}
	if err := e.docker.Ping(); err != nil {
		t.Fatalf("dockerd does not answer on /var/run/docker.sock (%v): run scripts/test-deps", err)
	}
	if _, err := e.docker.InspectImage(podtest.Image); err != nil {
		t.Fatalf("image %s missing (%v): run scripts/test-deps", podtest.Image, err)
	}
	e.label = "e2e-" + strings.ToLower(nonName.ReplaceAllString(t.Name(), "-"))
	e.removeContainers()
	t.Cleanup(e.removeContainers) // registered first: runs after the cluster stopped

	bin := t.TempDir()
	e.executorBin = filepath.Join(bin, "bcs-container-executor")
	if out, err := exec.Command("go", "build", "-o", e.executorBin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	e.numaState = filepath.Join(t.TempDir(), "numa.json")
	// A fake two-node topology (this machine has one node): node 0 has
	// CPUs 0-1, which exist here, node 1 CPUs 2-3.
	e.sysfsRoot = t.TempDir()
	for node, cpus := range map[string]string{"node0": "0-1", "node1": "2-3"} {
		dir := filepath.Join(e.sysfsRoot, "devices/system/node", node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpulist"), []byte(cpus+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.c, err = devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr:                  "127.0.0.1:0",
		AllocationInterval:          devcluster.Duration(50 * time.Millisecond),
		WorkDir:                     t.TempDir(),
		ExecutorMode:                devcluster.ExecutorProcess,
		Agents:                      []devcluster.AgentSpec{{Hostname: "docker-1"}},
		ExecutorShutdownGracePeriod: devcluster.Duration(5 * time.Second),
		Logger:                      testlog.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.c.Stop)
	t.Cleanup(func() { // before Stop removes the sandboxes
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(e.c.WorkDir(), "agents", "*", "frameworks", "*", "executors", "*", "runs", "latest", "stderr"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
	})
	e.f = devclustertest.Subscribe(t, e.c.MasterURL(), "container-executor-test")
	return e
}

func (e *e2e) containers() []docker.APIContainers {
	list, err := e.docker.ListContainers(docker.ListContainersOptions{All: true, Filters: map[string][]string{"label": {podtest.Label + "=" + e.label}}})
	if err != nil {
		panic(err)
	}
	return list
}

func (e *e2e) removeContainers() {
	for _, c := range e.containers() {
		_ = e.docker.RemoveContainer(docker.RemoveContainerOptions{ID: c.ID, Force: true})
	}
}

// noContainersLeft waits for every labelled container to be removed.
func (e *e2e) noContainersLeft(t *testing.T, why string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := e.containers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, c := range left {
				names = append(names, strings.Join(c.Names, ",")+" "+c.State)
			}
			t.Fatalf("%s: containers left: %v", why, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// task is one container task of a LAUNCH_GROUP.
func task(id, name, script string) (string, *proto.TaskSpec) {
	return id, &proto.TaskSpec{
		Name: name,
		Container: &proto.ContainerSpec{
			Image: podtest.Image, PullPolicy: "IfNotPresent", Command: "sh", Args: []string{"-c", script},
			NetworkMode: pod.NetworkBridge,
		},
		KillGracePeriodSeconds: 1,
		Resources:              proto.Resources{CPUs: 0.1, MemMB: 32},
	}
}

type taskDef struct {
	id   string
	spec *proto.TaskSpec
}

// launch sends LAUNCH_GROUP of tasks on executor execID, on the next
// offer, with the real executor binary and the given kill grace.
func (e *e2e) launch(t *testing.T, execID string, grace time.Duration, tasks ...taskDef) mesos.Offer {
	t.Helper()
	o := e.f.AwaitOffer()
	// No registry: network containers run the test image.
	cmdline := fmt.Sprintf("./bcs-container-executor --label %s=%s --numa-state %s --sysfs-root %s --ack-timeout 3s --codec json --network-image %s --network-command '%s' %s",
		podtest.Label, e.label, e.numaState, e.sysfsRoot, podtest.Image, strings.Join(podtest.NetworkCommand(), " "), e.extraArgs)
	executable := true
	ex := mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: execID},
		FrameworkID: &mesos.FrameworkID{Value: e.f.ID},
		Command:     &mesos.CommandInfo{Value: &cmdline, URIs: []mesos.CommandInfo_URI{{Value: "file://" + e.executorBin, Executable: &executable}}},
		Resources:   []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32), devclustertest.Scalar("disk", 10)},
	}
	infos := make([]mesos.TaskInfo, len(tasks))
	for i, td := range tasks {
		data, err := td.spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		infos[i] = mesos.TaskInfo{
			Name: td.spec.Name, TaskID: mesos.TaskID{Value: td.id}, AgentID: o.AgentID, Data: data,
			Resources:  []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32)},
			KillPolicy: &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(grace)}},
		}
	}
	e.f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, infos...)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	return o
}

// running waits until every task is RUNNING.
func (e *e2e) running(ids ...string) {
	for _, id := range ids {
		e.f.AwaitAck(id, mesos.TASK_RUNNING, nil)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// bridgePod is seed 001's two-container pod: web owns the network and
// publishes hostPort with an HTTP check on path; side joins it.
func bridgePod(t *testing.T, path string) (web, side taskDef) {
	id, spec := task("web.0", "web", httpdScript)
	spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080, HostPort: freePort(t)}}
	spec.HealthChecks = []proto.HealthCheck{{Type: "HTTP", PortName: "http", Path: path,
		IntervalSeconds: 0.2, TimeoutSeconds: 1, ConsecutiveFailures: 3}}
	web = taskDef{id, spec}
	id, spec = task("side.0", "side", "exec sleep 100000")
	return web, taskDef{id, spec}
}

func containerInfo(t *testing.T, st mesos.TaskStatus) proto.ContainerInfo {
	t.Helper()
	var info proto.ContainerInfo
	if err := json.Unmarshal(st.Data, &info); err != nil || info.ID == "" {
		t.Fatalf("task %q %s data %q: not ContainerInfo (%v)", st.TaskID.Value, st.GetState(), st.Data, err)
	}
	return info
}

// Seed 001 through the dev cluster and the real executor binary: a BRIDGE
// pod of two containers goes RUNNING with ContainerInfo data and turns
// healthy by its HTTP check; an exec MESSAGE is answered; `docker kill`
// of one container fails the whole group and every container is removed;
// the executor then exits (FAILURE with status 0, mesos-facts: normal).
func TestBridgePodThroughDevCluster(t *testing.T) {
	e := setup(t)
	web, side := bridgePod(t, "/health")
	o := e.launch(t, "exec-bridge", 2*time.Second, web, side)
	f := e.f

	var infos []proto.ContainerInfo
	for _, td := range []taskDef{web, side} {
		f.AwaitAck(td.id, mesos.TASK_STARTING, nil)
		st := f.AwaitAck(td.id, mesos.TASK_RUNNING, nil)
		info := containerInfo(t, st)
		if info.Status != "running" || info.Pid <= 0 || info.IPAddress == "" || info.NetworkMode != "bridge" {
			t.Errorf("task %q RUNNING data %+v", td.id, info)
		}
		infos = append(infos, info)
	}
	if infos[0].IPAddress != infos[1].IPAddress {
		t.Errorf("side %s does not share web's network %s", infos[1].IPAddress, infos[0].IPAddress)
	}
	f.AwaitAck(web.id, mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.Healthy != nil && s.GetHealthy() })

	// A framework MESSAGE exec runs in the container (docker exec) and
	// comes back as a MessageResult with the same id.
	msg := proto.Message{ID: "exec-1", Type: proto.MessageExec, TaskID: side.id, Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/health"}}
	mdata, _ := msg.Encode()
	f.Call(calls.Message(o.AgentID.Value, "exec-bridge", mdata))
	m := f.Await("MESSAGE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_MESSAGE }).Message
	if res, err := proto.DecodeMessageResult(m.Data); err != nil || !res.OK || res.ID != "exec-1" || res.Output != "ok\n" {
		t.Errorf("exec result %+v (%v)", res, err)
	}

	if err := e.docker.KillContainer(docker.KillContainerOptions{ID: infos[1].ID, Signal: docker.SIGKILL}); err != nil {
		t.Fatal(err)
	}
	for _, td := range []taskDef{web, side} {
		st := f.AwaitAck(td.id, mesos.TASK_FAILED, nil)
		if !strings.Contains(st.GetMessage(), `task "side.0" failed: container exited with code 137`) {
			t.Errorf("task %q FAILED message %q", td.id, st.GetMessage())
		}
	}
	failure := f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE }).Failure
	if failure.GetStatus() != 0 {
		t.Errorf("executor exit status %d", failure.GetStatus())
	}
	e.noContainersLeft(t, "after the group failed")
}

// Seed 001 through the dev cluster and the real executor binary: a
// sidecar exiting 0 is TASK_FINISHED while web runs on, healthy and not
// killed; once web exits 0 too (told to by an exec MESSAGE), it is
// TASK_FINISHED and the executor exits (FAILURE with status 0) with
// nothing left.
func TestFinishedContainersEndExecutorThroughDevCluster(t *testing.T) {
	e := setup(t)
	web, _ := bridgePod(t, "/health")
	web.spec.Container.Args = []string{"-c", "mkdir -p /www && echo ok > /www/health && httpd -p 8080 -h /www && until [ -f /stop ]; do sleep 0.1; done"}
	id, spec := task("side.0", "side", "sleep 0.5; exit 0")
	side := taskDef{id, spec}
	o := e.launch(t, "exec-finish", time.Second, web, side)
	f := e.f

	f.AwaitAck(web.id, mesos.TASK_RUNNING, nil)
	st := f.AwaitAck(side.id, mesos.TASK_FINISHED, nil)
	if info := containerInfo(t, st); info.ExitCode != 0 || info.Status != "exited" {
		t.Errorf("side FINISHED data %+v", info)
	}
	f.AwaitAck(web.id, mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.Healthy != nil && s.GetHealthy() })
	time.Sleep(time.Second) // five check intervals: web runs on
	msg := proto.Message{ID: "stop-1", Type: proto.MessageExec, TaskID: web.id, Command: []string{"touch", "/stop"}}
	mdata, _ := msg.Encode()
	f.Call(calls.Message(o.AgentID.Value, "exec-finish", mdata))
	st = f.AwaitAck(web.id, mesos.TASK_FINISHED, nil)
	if info := containerInfo(t, st); info.ExitCode != 0 {
		t.Errorf("web FINISHED data %+v", info)
	}
	failure := f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE }).Failure
	if failure.GetStatus() != 0 {
		t.Errorf("executor exit status %d", failure.GetStatus())
	}
	e.noContainersLeft(t, "after every container finished")
}

// KILL with the kill policy's grace: SIGTERM, then SIGKILL once the grace
// period is over; the whole pod is KILLED and removed.
func TestKillWithGraceThroughDevCluster(t *testing.T) {
	e := setup(t)
	id, spec := task("stubborn.0", "stubborn", `trap "echo term" TERM; while true; do sleep 0.1; done`)
	stubborn := taskDef{id, spec}
	id, spec = task("polite.0", "polite", "exec sleep 100000")
	polite := taskDef{id, spec}
	o := e.launch(t, "exec-kill", 2*time.Second, stubborn, polite)
	e.running(stubborn.id, polite.id)

	start := time.Now()
	e.f.Call(calls.Kill(stubborn.id, o.AgentID.Value))
	for _, td := range []taskDef{stubborn, polite} {
		e.f.AwaitAck(td.id, mesos.TASK_KILLED, nil)
	}
	if took := time.Since(start); took < 2*time.Second || took > 15*time.Second {
		t.Errorf("KILLED after %v, want the 2s grace period then SIGKILL", took)
	}
	e.noContainersLeft(t, "after KILL")
}

// proto/README.md: after consecutiveFailures failed checks (wrong path:
// 404) the executor kills the pod and reports TASK_FAILED with the health
// check's reason and healthy=false.
func TestUnhealthyPodFailsThroughDevCluster(t *testing.T) {
	e := setup(t)
	web, side := bridgePod(t, "/missing")
	e.launch(t, "exec-unhealthy", time.Second, web, side)
	e.running(web.id, side.id)
	st := e.f.AwaitAck(web.id, mesos.TASK_FAILED, nil)
	if st.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED || st.Healthy == nil || st.GetHealthy() ||
		!strings.Contains(st.GetMessage(), "failed 3 times in a row") || !strings.Contains(st.GetMessage(), "status 404") {
		t.Errorf("FAILED reason %s healthy %v message %q", st.GetReason(), st.Healthy, st.GetMessage())
	}
	e.f.AwaitAck(side.id, mesos.TASK_FAILED, nil)
	e.noContainersLeft(t, "after the health check failed")
}

// An executor killed mid-run (SIGKILL, as a crash) leaves its containers
// and its pinned CPUs; the next executor of the framework on the agent
// tears the containers down and releases the CPUs before it runs its own
// pod (seed 001 NUMA: allocations are agent-wide and survive executor
// restarts; node 1 is held by another pod, so node 0 is pinned).
func TestExecutorCrashIsCleanedUp(t *testing.T) {
	e := setup(t)
	held, _ := json.Marshal(map[string]any{"owners": map[string]any{"other-pod/x": map[string]any{"node": 1, "cpus": []int{2, 3}}}})
	if err := os.WriteFile(e.numaState, held, 0o644); err != nil {
		t.Fatal(err)
	}
	alloc := &numa.Allocator{SysfsRoot: e.sysfsRoot, StatePath: e.numaState}
	id, spec := task("crash.0", "main", "exec sleep 100000")
	spec.Resources.CPUs, spec.Resources.PinCPUs = 2, true
	o := e.launch(t, "exec-crash", time.Second, taskDef{id, spec})
	e.running("crash.0")
	ins, err := e.docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: pod.ContainerName(e.f.ID, "exec-crash", "main")})
	if err != nil {
		t.Fatal(err)
	}
	if ins.HostConfig.CPUSetCPUs != "0-1" || ins.HostConfig.CPUSetMEMs != "0" {
		t.Fatalf("pinned container: cpuset-cpus %q cpuset-mems %q, want 0-1 and 0", ins.HostConfig.CPUSetCPUs, ins.HostConfig.CPUSetMEMs)
	}
	if all, _ := alloc.Allocations(); len(all) != 2 {
		t.Errorf("allocations while running: %v", all)
	}
	if err := e.c.KillExecutor(e.f.ID, o.AgentID.Value, "exec-crash"); err != nil {
		t.Fatal(err)
	}
	st := e.f.AwaitAck("crash.0", mesos.TASK_FAILED, nil)
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Errorf("reason %s", st.GetReason())
	}
	if left := e.containers(); len(left) != 1 || left[0].Labels[pod.LabelPod] != "exec-crash" {
		t.Fatalf("after the crash: %d containers, want the crashed pod's one", len(left))
	}

	id, spec = task("next.0", "main", "exec sleep 100000")
	o = e.launch(t, "exec-next", time.Second, taskDef{id, spec})
	e.running("next.0")
	for _, c := range e.containers() {
		if c.Labels[pod.LabelPod] != "exec-next" {
			t.Errorf("container %v of pod %q survived the next executor's start", c.Names, c.Labels[pod.LabelPod])
		}
	}
	if all, _ := alloc.Allocations(); len(all) != 1 || all["other-pod/x"].Node != 1 {
		t.Errorf("allocations after recovery: %v, want only other-pod's", all)
	}
	e.f.Call(calls.Kill("next.0", o.AgentID.Value))
	e.f.AwaitAck("next.0", mesos.TASK_KILLED, nil)
	e.noContainersLeft(t, "after KILL")
}

// Two frameworks (two clusters) on one dockerd run pods of the
// same executor and task IDs at once — the same namespace and application
// names — without a clash of container names; when one framework's
// executor crashes, its next executor tears down that framework's pod
// only, and the other framework's runs on.
func TestTwoFrameworksShareADockerd(t *testing.T) {
	one, two := setup(t), setup(t)
	const execID, taskID = "demo_web_0_1.mwzgt9c0", "demo_web_0_1.mwzgt9c0_0"
	started := map[*e2e]mesos.Offer{}
	for _, e := range []*e2e{one, two} {
		id, spec := task(taskID, "container-0", "exec sleep 100000")
		started[e] = e.launch(t, execID, time.Second, taskDef{id, spec})
		e.running(taskID)
	}
	byFramework := func() map[string][]docker.APIContainers {
		out := map[string][]docker.APIContainers{}
		for _, c := range one.containers() { // both label theirs alike
			out[c.Labels[pod.LabelFramework]] = append(out[c.Labels[pod.LabelFramework]], c)
		}
		return out
	}
	for _, e := range []*e2e{one, two} {
		list := byFramework()[e.f.ID]
		if want := "/" + pod.ContainerName(e.f.ID, execID, "container-0"); len(list) != 1 || list[0].Names[0] != want || list[0].State != "running" {
			t.Fatalf("framework %s's containers %+v, want one running named %s", e.f.ID, list, want)
		}
	}

	if err := one.c.KillExecutor(one.f.ID, started[one].AgentID.Value, execID); err != nil {
		t.Fatal(err)
	}
	one.f.AwaitAck(taskID, mesos.TASK_FAILED, nil)
	id, spec := task("demo_web_0_2.mwzgt9c0_0", "container-0", "exec sleep 100000")
	next := one.launch(t, "demo_web_0_2.mwzgt9c0", time.Second, taskDef{id, spec})
	one.running(id)
	all := byFramework()
	if list := all[one.f.ID]; len(list) != 1 || list[0].Labels[pod.LabelPod] != "demo_web_0_2.mwzgt9c0" {
		t.Errorf("framework %s after its executor's crash: %+v, want only its next pod", one.f.ID, list)
	}
	if list := all[two.f.ID]; len(list) != 1 || list[0].State != "running" {
		t.Errorf("framework %s's pod after the other's sweep: %+v, want it running", two.f.ID, list)
	}
	one.f.Call(calls.Kill(id, next.AgentID.Value))
	one.f.AwaitAck(id, mesos.TASK_KILLED, nil)
	two.f.Call(calls.Kill(taskID, started[two].AgentID.Value))
	two.f.AwaitAck(taskID, mesos.TASK_KILLED, nil)
	one.noContainersLeft(t, "after the kills")
}

// withCNI points the executor at a bridge + host-local + portmap conf
// list (cniVersion 1.0.0, Debian's containernetworking-plugins) on a
// bridge and /24 of the test's own, with --network-mode cni; it returns
// the host-local data dir. The bridge is deleted in t.Cleanup.
func (e *e2e) withCNI(t *testing.T, network string) (ipamDir string) {
	t.Helper()
	const plugins = "/usr/lib/cni"
	for _, plugin := range []string{"bridge", "host-local", "portmap"} {
		if _, err := os.Stat(filepath.Join(plugins, plugin)); err != nil {
			t.Fatalf("CNI plugin %s missing (%v): run scripts/test-deps", plugin, err)
		}
	}
	const bridge = "bcse232"
	dir := t.TempDir()
	ipamDir = filepath.Join(dir, "ipam")
	_ = exec.Command("ip", "link", "del", bridge).Run()
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       network,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": bridge, "isGateway": true, "ipMasq": false,
				"ipam": map[string]any{"type": "host-local", "dataDir": ipamDir, "ranges": [][]map[string]string{{{"subnet": "10.254.232.0/24"}}}},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	data, _ := json.Marshal(conf)
	confDir := filepath.Join(dir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-test.conflist"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.extraArgs = fmt.Sprintf("--network-mode cni --cni-plugin-dir %s --cni-conf-dir %s --cni-cache-dir %s",
		plugins, confDir, filepath.Join(dir, "cache"))
	return ipamDir
}

// reservations lists the host-local IP reservations of network.
func reservations(t *testing.T, ipamDir, network string) []string {
	entries, err := os.ReadDir(filepath.Join(ipamDir, network))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ips []string
	for _, e := range entries {
		if net.ParseIP(e.Name()) != nil {
			ips = append(ips, e.Name())
		}
	}
	return ips
}

// CNI mode through the binary's flags: the two containers share the
// network container's CNI address and the HTTP check reaches it. A crash
// of the executor leaves the containers and the CNI reservation; the next
// executor tears both down (business containers, CNI DEL, network
// container), the issue's "executor killed mid-run → restart cleans up
// containers and CNI state".
func TestCNIPodCrashIsCleanedUp(t *testing.T) {
	e := setup(t)
	const network = "bcs-e2e-net"
	ipamDir := e.withCNI(t, network)
	id, spec := task("web.0", "web", httpdScript)
	spec.Container.NetworkMode = network
	spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080}}
	spec.HealthChecks = []proto.HealthCheck{{Type: "HTTP", PortName: "http", Path: "/health", IntervalSeconds: 0.2, TimeoutSeconds: 1, ConsecutiveFailures: 3}}
	web := taskDef{id, spec}
	id, spec = task("side.0", "side", "exec sleep 100000")
	spec.Container.NetworkMode = network
	o := e.launch(t, "exec-cni", time.Second, web, taskDef{id, spec})
	var ips []string
	for _, id := range []string{"web.0", "side.0"} {
		info := containerInfo(t, e.f.AwaitAck(id, mesos.TASK_RUNNING, nil))
		if info.NetworkMode != "cni" || !strings.HasPrefix(info.IPAddress, "10.254.232.") {
			t.Errorf("task %q RUNNING data %+v, want a CNI address", id, info)
		}
		ips = append(ips, info.IPAddress)
	}
	if ips[0] != ips[1] {
		t.Errorf("containers do not share the pod's address: %v", ips)
	}
	e.f.AwaitAck("web.0", mesos.TASK_RUNNING, func(s mesos.TaskStatus) bool { return s.Healthy != nil && s.GetHealthy() })

	if err := e.c.KillExecutor(e.f.ID, o.AgentID.Value, "exec-cni"); err != nil {
		t.Fatal(err)
	}
	e.f.AwaitAck("web.0", mesos.TASK_FAILED, nil)
	e.f.AwaitAck("side.0", mesos.TASK_FAILED, nil)
	if n := len(e.containers()); n != 3 {
		t.Fatalf("after the crash: %d containers, want 2 business + 1 network", n)
	}
	if got := reservations(t, ipamDir, network); len(got) != 1 || got[0] != ips[0] {
		t.Fatalf("after the crash: reservations %v, want %s", got, ips[0])
	}

	id, spec = task("next.0", "main", "exec sleep 100000")
	spec.Container.NetworkMode = network
	o = e.launch(t, "exec-next", time.Second, taskDef{id, spec})
	e.f.AwaitAck("next.0", mesos.TASK_RUNNING, nil)
	for _, c := range e.containers() {
		if c.Labels[pod.LabelPod] != "exec-next" {
			t.Errorf("container %v of pod %q survived the next executor's start", c.Names, c.Labels[pod.LabelPod])
		}
	}
	if got := reservations(t, ipamDir, network); len(got) != 1 {
		t.Errorf("after recovery: reservations %v, want only the new pod's", got)
	}
	e.f.Call(calls.Kill("next.0", o.AgentID.Value))
	e.f.AwaitAck("next.0", mesos.TASK_KILLED, nil)
	e.noContainersLeft(t, "after KILL")
	if got := reservations(t, ipamDir, network); len(got) != 0 {
		t.Errorf("after KILL: reservations %v", got)
	}
}

// Usage reports through the dev cluster and the real executor binary: a
// pod launched with a usage interval sends the framework one MESSAGE per
// interval with a sample of each container (docker stats), the busy
// loop above half a core between two, the sleeping one below a tenth.
func TestUsageReportsThroughDevCluster(t *testing.T) {
	e := setup(t)
	busyID, busy := task("busy.0", "busy", "while :; do :; done")
	idleID, idle := task("idle.0", "idle", "exec sleep 60")
	for _, spec := range []*proto.TaskSpec{busy, idle} {
		spec.Instance.TaskGroupID, spec.UsageIntervalSeconds = "tg-pod", 1
	}
	o := e.launch(t, "exec-usage", time.Second, taskDef{busyID, busy}, taskDef{idleID, idle})
	e.running(busyID, idleID)

	var reports []map[string]proto.TaskUsage
	for len(reports) < 2 {
		m := e.f.Await("usage report", func(ev *scheduler.Event) bool {
			if ev.Type != scheduler.Event_MESSAGE {
				return false
			}
			_, ok, _ := proto.DecodeUsageReport(ev.Message.Data)
			return ok
		}).Message
		r, _, err := proto.DecodeUsageReport(m.Data)
		if err != nil || r.TaskGroupID != "tg-pod" {
			t.Fatalf("report %+v, %v", r, err)
		}
		samples := map[string]proto.TaskUsage{}
		for _, s := range r.Tasks {
			samples[s.TaskID] = s
		}
		if len(samples) == 2 { // a report before both ran names one
			reports = append(reports, samples)
		}
	}
	for _, want := range []struct {
		id       string
		min, max float64
	}{{busyID, 0.5, 1.2}, {idleID, 0, 0.1}} {
		a, b := reports[0][want.id], reports[1][want.id]
		cores := float64(b.CPUNanos-a.CPUNanos) / float64(b.At.Sub(a.At).Nanoseconds())
		if cores < want.min || cores > want.max || b.MemBytes == 0 {
			t.Errorf("%s: %.3f cores over %v, %d bytes; want %.1f to %.1f cores and some memory", want.id, cores, b.At.Sub(a.At), b.MemBytes, want.min, want.max)
		}
	}
	e.f.Call(calls.Kill(busyID, o.AgentID.Value))
	e.f.AwaitAck(busyID, mesos.TASK_KILLED, nil)
	e.f.Await("FAILURE", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_FAILURE })
	e.noContainersLeft(t, "after the pod was killed")
}
