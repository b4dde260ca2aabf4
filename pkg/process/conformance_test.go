package process_test

import (
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor/runtimetest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The process runtime passes the executor runtime conformance suite.
func TestConformance(t *testing.T) {
	var e *env
	runtimetest.Run(t, runtimetest.Harness{
		New: func(t *testing.T) executor.Runtime {
			e = newEnv(t, nil)
			return e.rt
		},
		LongRunning: func(t *testing.T, id string) *proto.TaskSpec {
			return &proto.TaskSpec{Name: id, Instance: instanceOf(id), Process: &proto.ProcessSpec{
				ProcName: "sleep", WorkPath: e.workDir(id), StartCmd: "exec sleep 60", StartGracePeriod: 0.2,
			}}
		},
		Busy: func(t *testing.T, id string) *proto.TaskSpec {
			return &proto.TaskSpec{Name: id, Instance: instanceOf(id), Process: &proto.ProcessSpec{
				ProcName: "sh", WorkPath: e.workDir(id), StartCmd: "exec sh -c 'while :; do :; done'", StartGracePeriod: 0.2,
			}}
		},
		Idle: func(t *testing.T, id string) *proto.TaskSpec {
			return &proto.TaskSpec{Name: id, Instance: instanceOf(id), Process: &proto.ProcessSpec{
				ProcName: "sleep", WorkPath: e.workDir(id), StartCmd: "exec sleep 60", StartGracePeriod: 0.2,
			}}
		},
		Failing: func(t *testing.T, id string) *proto.TaskSpec {
			return &proto.TaskSpec{Name: id, Instance: instanceOf(id), Process: &proto.ProcessSpec{
				ProcName: "sleep", WorkPath: e.workDir(id), StartCmd: "exit 2", StartGracePeriod: 0.2,
			}}
		},
	})
}
