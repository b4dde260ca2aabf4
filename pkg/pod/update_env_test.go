package pod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// netns is the network namespace of process pid, as /proc shows it.
func netns(t *testing.T, pid int) string {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		t.Fatalf("netns of pid %d: %v", pid, err)
	}
	return ns
}

// readRecord reads the pod's state file.
func readRecord(t *testing.T, cfg Config) record {
	t.Helper()
	data, err := os.ReadFile(recordPath(cfg.SandboxDir, cfg.PodID))
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// execEnv is the environment a new process of taskID sees.
func execEnv(t *testing.T, p *Pod, taskID string) string {
	t.Helper()
	res, err := p.Exec(ctxT(t, 30*time.Second), taskID, ExecRequest{Command: []string{"env"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("env in task %q: %+v, %v", taskID, res, err)
	}
	return res.Output
}

// update-env (proto.MessageUpdateEnv): a container's environment
// is fixed when it is created, so the task's container is re-created with
// the new variables merged over its own, keeping name, command, files,
// labels and resources, and joining the pod's network container
// (container:<id>) like the original. The old container is gone, the task
// stays RUNNING and the state file names the new container. The first
// container is re-created the same way: the others keep the network.
func TestUpdateEnvRecreatesJoinedContainer(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	rec := &recorder{}
	cfg.OnUpdate = rec.add
	owner := containerTask("owner", httpdScript)
	owner.Spec.Files = []proto.File{{Path: "/www/index.html", Content: []byte("owner\n")}}
	worker := containerTask("worker", "exec sleep 100000")
	worker.Spec.Env = []proto.EnvVar{{Name: "MODE", Value: "old"}, {Name: "KEEP", Value: "kept"}}
	worker.Spec.Files = []proto.File{{Path: "/etc/app/app.conf", Content: []byte("conf v1\n")}}
	worker.Spec.Container.Labels = map[string]string{"app": "worker"}
	worker.Spec.Resources.MemMB = 96
	p, err := New(cfg, []Task{owner, worker})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	ownerInfo, _ := p.Info(owner.ID)
	before, _ := p.Info(worker.ID)

	update := []proto.EnvVar{{Name: "MODE", Value: "new"}, {Name: "POD", Value: "$BCS_POD_ID"}}
	if err := p.UpdateEnv(ctxT(t, time.Minute), worker.ID, update); err != nil {
		t.Fatalf("update env: %v", err)
	}
	after, _ := p.Info(worker.ID)
	if after.ID == before.ID || after.Name != before.Name || after.Status != "running" || after.Pid <= 0 {
		t.Fatalf("after update: before %+v after %+v, want a new running container of the same name", before, after)
	}
	if after.IPAddress != ownerInfo.IPAddress {
		t.Errorf("worker reports IP %q, want the owner's %q", after.IPAddress, ownerInfo.IPAddress)
	}
	var nsc *docker.NoSuchContainer
	if _, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: before.ID}); !errors.As(err, &nsc) {
		t.Errorf("old container %s: %v, want it removed", before.ID, err)
	}
	env := execEnv(t, p, worker.ID)
	for _, want := range []string{"MODE=new", "KEEP=kept", "POD=" + cfg.PodID, "BCS_POD_ID=" + cfg.PodID} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "MODE=old\n") {
		t.Errorf("the old value is still there:\n%s", env)
	}
	if res, _ := p.Exec(ctxT(t, 30*time.Second), worker.ID, ExecRequest{Command: []string{"cat", "/etc/app/app.conf"}}); res.Output != "conf v1\n" {
		t.Errorf("configmap file in the new container: %q", res.Output)
	}
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: after.ID})
	if err != nil {
		t.Fatal(err)
	}
	network := readRecord(t, cfg).NetworkContainer
	if network == "" || ins.HostConfig.NetworkMode != "container:"+network {
		t.Errorf("network mode %q, want container:%s (the network container)", ins.HostConfig.NetworkMode, network)
	}
	if ins.Config.Labels["app"] != "worker" || ins.Config.Labels[LabelTask] != worker.ID || ins.Config.Labels[podtest.Label] != cfg.PodID {
		t.Errorf("labels %v", ins.Config.Labels)
	}
	if ins.HostConfig.Memory != 96<<20 || ins.HostConfig.CPUShares != 102 {
		t.Errorf("resources: memory %d shares %d", ins.HostConfig.Memory, ins.HostConfig.CPUShares)
	}
	if got, want := netns(t, after.Pid), netns(t, ownerInfo.Pid); got != want {
		t.Errorf("new worker in netns %s, owner in %s", got, want)
	}
	res, err := p.Exec(ctxT(t, 30*time.Second), worker.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
	if err != nil || res.Output != "owner\n" {
		t.Errorf("new worker → owner on 127.0.0.1: %+v, %v", res, err)
	}
	time.Sleep(300 * time.Millisecond) // the old container's wait returns
	if p.State() != taskstate.Running {
		t.Errorf("pod %s, want running", p.State())
	}
	for _, id := range []string{owner.ID, worker.ID} {
		if got := rec.states(id); !slices.Equal(got, []taskstate.State{taskstate.Starting, taskstate.Running}) {
			t.Errorf("task %q states %v, want [starting running]", id, got)
		}
	}
	if r := readRecord(t, cfg); !slices.Equal(r.Containers, []string{ownerInfo.ID, after.ID}) {
		t.Errorf("state file names %v, want [%s %s]", r.Containers, ownerInfo.ID, after.ID)
	}

	// The first container: re-created in the same network; the worker
	// keeps running and reaches it.
	if err := p.UpdateEnv(ctxT(t, time.Minute), owner.ID, []proto.EnvVar{{Name: "MODE", Value: "owner"}}); err != nil {
		t.Fatalf("update env of the first container: %v", err)
	}
	ownerAfter, _ := p.Info(owner.ID)
	if ownerAfter.ID == ownerInfo.ID || ownerAfter.IPAddress != ownerInfo.IPAddress || netns(t, ownerAfter.Pid) != netns(t, after.Pid) {
		t.Errorf("first container: before %+v after %+v, want a new container in the same network", ownerInfo, ownerAfter)
	}
	if env := execEnv(t, p, owner.ID); !strings.Contains(env, "MODE=owner\n") {
		t.Errorf("first container env:\n%s", env)
	}
	if now, _ := p.Info(worker.ID); now.ID != after.ID || now.Pid != after.Pid {
		t.Errorf("worker changed with the first container: before %+v now %+v", after, now)
	}
	eventually(t, 10*time.Second, func() string {
		res, err := p.Exec(ctxT(t, 10*time.Second), worker.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
		if err != nil || res.Output != "owner\n" {
			return fmt.Sprintf("worker → new first container: %+v, %v", res, err)
		}
		return ""
	})
	if n := labelled(t, c, cfg); n != 3 {
		t.Errorf("%d containers, want 2 and the network container", n)
	}

	// The executor dies; its successor tears down the new container from
	// the state file.
	p.cancelMon()
	if pods, err := Cleanup(ctxT(t, time.Minute), Config{Docker: c, SandboxDir: cfg.SandboxDir}); err != nil || pods != 1 {
		t.Fatalf("cleanup: %d pods, %v; want the one pod", pods, err)
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left after cleanup", n)
	}
}

// The arguments of update-env are checked before anything is touched.
func TestUpdateEnvRejects(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	p, err := New(cfg, []Task{containerTask("owner", "exec sleep 100000"), containerTask("worker", "exec sleep 100000")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = p.Kill(ctxT(t, 30*time.Second), syscall.SIGKILL, 0) })
	before, _ := p.Info("task-worker")
	for _, tc := range []struct {
		name   string
		taskID string
		env    []proto.EnvVar
		want   error
	}{
		{"unknown task", "task-nope", []proto.EnvVar{{Name: "A", Value: "1"}}, errdefs.ErrNotFound},
		{"no variables", "task-worker", nil, errdefs.ErrInvalidArgument},
		{"empty name", "task-worker", []proto.EnvVar{{Name: "", Value: "1"}}, errdefs.ErrInvalidArgument},
		{"name with =", "task-worker", []proto.EnvVar{{Name: "A=B", Value: "1"}}, errdefs.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.UpdateEnv(ctxT(t, 10*time.Second), tc.taskID, tc.env); !errors.Is(err, tc.want) {
				t.Errorf("update env: %v, want %v", err, tc.want)
			}
		})
	}
	if after, _ := p.Info("task-worker"); after.ID != before.ID {
		t.Errorf("worker re-created by a rejected update: %s → %s", before.ID, after.ID)
	}
}

// A CNM pod of one container: its container owns the network but nobody
// joined it, so it can be re-created; the pod keeps running and stops
// cleanly afterwards.
func TestUpdateEnvSoleCNMContainer(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	solo := containerTask("solo", "exec sleep 100000")
	p, err := New(cfg, []Task{solo})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	before, _ := p.Info(solo.ID)
	if err := p.UpdateEnv(ctxT(t, time.Minute), solo.ID, []proto.EnvVar{{Name: "MODE", Value: "solo"}}); err != nil {
		t.Fatalf("update env: %v", err)
	}
	after, _ := p.Info(solo.ID)
	if after.ID == before.ID || after.Status != "running" || after.NetworkMode != "bridge" || after.IPAddress == "" {
		t.Errorf("before %+v after %+v", before, after)
	}
	if env := execEnv(t, p, solo.ID); !strings.Contains(env, "MODE=solo\n") {
		t.Errorf("env lacks MODE=solo:\n%s", env)
	}
	time.Sleep(300 * time.Millisecond)
	if p.State() != taskstate.Running {
		t.Fatalf("pod %s, want running", p.State())
	}
	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGTERM, time.Second); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(context.Background()); st != taskstate.Killed || err != nil {
		t.Errorf("pod %s (%v), want killed", st, err)
	}
	if n := labelled(t, c, cfg); n != 0 {
		t.Errorf("%d containers left", n)
	}
}

// CNI mode: the network container owns the network, so the first business
// container can be re-created; the new one joins the network container's
// namespace and keeps the pod IP (HOST), its files are written again, and
// teardown still finds everything.
func TestUpdateEnvCNIFirstContainer(t *testing.T) {
	c := podtest.Docker(t)
	cfg, n := testCNI(t, c, 79)
	web := containerTask("web", httpdScript)
	web.Spec.Container.NetworkMode = n.name
	web.Spec.Container.NetworkType = "cni"
	web.Spec.Files = []proto.File{{Path: "/www/index.html", Content: []byte("cni web\n")}}
	side := containerTask("side", "exec sleep 100000")
	p, err := New(cfg, []Task{web, side})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	before, _ := p.Info(web.ID)
	if err := p.UpdateEnv(ctxT(t, time.Minute), web.ID, []proto.EnvVar{{Name: "MODE", Value: "cni"}, {Name: "MYIP", Value: "$HOST"}}); err != nil {
		t.Fatalf("update env: %v", err)
	}
	after, _ := p.Info(web.ID)
	if after.ID == before.ID || after.Status != "running" || after.IPAddress != before.IPAddress || after.NetworkMode != "cni" {
		t.Fatalf("before %+v after %+v", before, after)
	}
	env := execEnv(t, p, web.ID)
	for _, want := range []string{"MODE=cni", "MYIP=" + before.IPAddress, "HOST=" + before.IPAddress, "BCS_CNI_NAME=eth0"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	network, err := c.ListContainers(docker.ListContainersOptions{Filters: map[string][]string{"label": {LabelPod + "=" + cfg.PodID, LabelRole + "=network"}}})
	if err != nil || len(network) != 1 {
		t.Fatalf("network container: %v, %v", network, err)
	}
	netIns, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: network[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := netns(t, after.Pid), netns(t, netIns.State.Pid); got != want {
		t.Errorf("new web in netns %s, network container in %s", got, want)
	}
	sideInfo, _ := p.Info(side.ID)
	if got, want := netns(t, sideInfo.Pid), netns(t, netIns.State.Pid); got != want {
		t.Errorf("side in netns %s, network container in %s", got, want)
	}
	eventually(t, 10*time.Second, func() string {
		res, err := p.Exec(ctxT(t, 10*time.Second), side.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
		if err != nil || res.Output != "cni web\n" {
			return fmt.Sprintf("side → new web on 127.0.0.1: %+v, %v", res, err)
		}
		return ""
	})
	if r := readRecord(t, cfg); !slices.Contains(r.Containers, after.ID) || slices.Contains(r.Containers, before.ID) {
		t.Errorf("state file names %v, want %s and not %s", r.Containers, after.ID, before.ID)
	}
	time.Sleep(300 * time.Millisecond)
	if p.State() != taskstate.Running {
		t.Fatalf("pod %s, want running", p.State())
	}
	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGTERM, time.Second); err != nil {
		t.Fatal(err)
	}
	n.assertTornDown(t, c, cfg)
}
