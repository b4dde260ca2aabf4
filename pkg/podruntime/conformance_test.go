package podruntime

import (
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor/runtimetest"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The pod runtime passes the executor runtime conformance suite, against
// the real dockerd with busybox containers.
func TestConformance(t *testing.T) {
	c := podtest.Docker(t)
	spec := func(id, script string) *proto.TaskSpec { return containerTask(id, id, script).Spec }
	runtimetest.Run(t, runtimetest.Harness{
		New: func(t *testing.T) executor.Runtime {
			rt, _ := newRuntime(t, c, nil)
			return rt
		},
		LongRunning: func(t *testing.T, id string) *proto.TaskSpec { return spec(id, "exec sleep 60") },
		Failing:     func(t *testing.T, id string) *proto.TaskSpec { return spec(id, "exit 2") },
		Busy:        func(t *testing.T, id string) *proto.TaskSpec { return spec(id, "while :; do :; done") },
		Idle:        func(t *testing.T, id string) *proto.TaskSpec { return spec(id, "exec sleep 60") },
	})
}
