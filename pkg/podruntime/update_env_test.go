package podruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
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

// The update-env message (proto.MessageUpdateEnv) answers OK once
// the task's container is re-created with the new environment in the
// pod's network; the task stays RUNNING and a fresh RUNNING carries the
// new container's data; its COMMAND check runs against the new container.
// Malformed messages are answered with an error.
func TestUpdateEnvMessage(t *testing.T) {
	c := podtest.Docker(t)
	rt, _ := newRuntime(t, c, nil)
	rep := newReporter(t)
	web, side, _ := bridgePod(t)
	side.Spec.Env = []proto.EnvVar{{Name: "MODE", Value: "old"}}
	side.Spec.Files = []proto.File{{Path: "/etc/app/ready", Content: []byte("yes\n")}}
	check := fastCheck("COMMAND")
	check.Command = "test -f /etc/app/ready"
	side.Spec.HealthChecks = []proto.HealthCheck{check}
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	webInfo := containerInfo(t, rep.awaitState(web.ID(), taskstate.Running))
	before := containerInfo(t, rep.awaitState(side.ID(), taskstate.Running))
	rep.awaitHealthy(side.ID(), true)
	send := func(m proto.Message) proto.MessageResult {
		t.Helper()
		m.ID = string(m.Type) + "-" + m.TaskID
		res := rt.Message(context.Background(), &m)
		if res.ID != m.ID || res.Type != m.Type || res.TaskID != m.TaskID {
			t.Errorf("result %+v does not answer message %+v", res, m)
		}
		return res
	}

	res := send(proto.Message{Type: proto.MessageUpdateEnv, TaskID: side.ID(), Env: []proto.EnvVar{{Name: "MODE", Value: "new"}}})
	if !res.OK || res.Error != "" {
		t.Fatalf("update-env: %+v", res)
	}
	after := containerInfo(t, rep.await(side.ID(), "RUNNING after update-env", func(r executor.Report) bool {
		return r.State == taskstate.Running && r.Message == "re-created with a new environment"
	}))
	if after.ID == before.ID || after.Pid == before.Pid || after.Status != "running" || after.IPAddress != before.IPAddress || after.Name != before.Name {
		t.Errorf("update-env: before %+v after %+v", before, after)
	}
	if res := send(proto.Message{Type: proto.MessageExec, TaskID: side.ID(), Command: []string{"sh", "-c", "echo $MODE"}}); res.Output != "new\n" {
		t.Errorf("MODE in the new container: %+v", res)
	}
	if got, want := netns(t, after.Pid), netns(t, webInfo.Pid); got != want {
		t.Errorf("new side in netns %s, web in %s", got, want)
	}
	var nsc *docker.NoSuchContainer
	if _, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: before.ID}); !errors.As(err, &nsc) {
		t.Errorf("old container %s: %v, want it removed", before.ID, err)
	}
	// Five check intervals: a check still aimed at the old container
	// would fail three times in a row and kill the pod.
	time.Sleep(time.Second)
	if st := rt.Tasks(); st[side.ID()] != taskstate.Running || st[web.ID()] != taskstate.Running {
		t.Errorf("after update-env: tasks %v, want both running", st)
	}
	for _, s := range rep.states(side.ID()) {
		if s != taskstate.Starting && s != taskstate.Running {
			t.Errorf("side reported %s: %v", s, rep.states(side.ID()))
		}
	}

	for _, tc := range []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"no env", proto.Message{Type: proto.MessageUpdateEnv, TaskID: side.ID()}, "without env"},
		{"unknown task", proto.Message{Type: proto.MessageUpdateEnv, TaskID: "nope", Env: []proto.EnvVar{{Name: "MODE", Value: "x"}}}, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := send(tc.msg); res.OK || !strings.Contains(res.Error, tc.want) {
				t.Errorf("update-env: %+v, want an error containing %q", res, tc.want)
			}
		})
	}
	if res := send(proto.Message{Type: proto.MessageExec, TaskID: web.ID(), Command: []string{"sh", "-c", "echo ${MODE:-unset}"}}); res.Output != "unset\n" {
		t.Errorf("web env changed by a refused update-env: %+v", res)
	}
	if now, _ := rt.group(web.ID()).getPod().Info(web.ID()); now.ID != webInfo.ID || now.Pid != webInfo.Pid {
		t.Errorf("web re-created by a refused update-env: before %+v now %+v", webInfo, now)
	}
}
