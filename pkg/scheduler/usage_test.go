package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// sendAs sends data as the executor of task group g.
func (s *system) sendAs(g *registry.TaskGroup, data []byte) {
	s.t.Helper()
	if err := s.cluster.SendExecutorMessage(s.cluster.Frameworks()[0], g.AgentID, g.ID, data); err != nil {
		s.t.Fatal(err)
	}
}

// The executors' usage reports reach the driver's usage table and never
// the loop: they are taken while a long step holds the loop, the core
// never sees them (it would show a message result it cannot read on the
// instance), and Usage answers from any goroutine. The answer to a
// usage-interval message nobody waits for stays off the instance too;
// other results still reach the core.
func TestDriverUsageReportsBypassTheCore(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 1)); err != nil {
		t.Fatal(err)
	}
	g := s.running("game", 1)[0]
	task := g.Tasks[0].ID
	at := time.Now()
	reportAt := func(at time.Time, cpu time.Duration) []byte {
		data, err := (&proto.UsageReport{TaskGroupID: g.ID, Tasks: []proto.TaskUsage{
			{TaskID: task, CPUNanos: uint64(cpu), MemBytes: 64 << 20, At: at}}}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}

	busy := make(chan error, 1)
	go func() { busy <- s.driver.Busy(ctx, 3*time.Second) }()
	time.Sleep(100 * time.Millisecond) // the loop takes the query at once
	s.sendAs(g, reportAt(at, 4*time.Second))
	s.sendAs(g, reportAt(at.Add(2*time.Second), 5*time.Second))
	s.eventually("the usage of the task group known while the loop is busy", func() (bool, string) {
		select {
		case <-busy:
			t.Fatal("the loop was free before the reports were taken")
		default:
		}
		u, ok := s.driver.Usage([]string{g.ID})[g.ID]
		return ok && u.CPUCores == 0.5 && u.MemBytes == 64<<20 && u.Window == 2*time.Second, fmt.Sprintf("%+v %v", u, ok)
	})
	if err := <-busy; err != nil {
		t.Fatal(err)
	}

	refused, _ := (&proto.MessageResult{ID: "usage-interval-1", Type: proto.MessageUsageInterval, TaskID: task, Error: `unknown message type "usage-interval"`}).Encode()
	s.sendAs(g, refused)
	time.Sleep(300 * time.Millisecond) // a result the core took would be shown within a step
	if got := s.instanceMessage("game"); got != "" {
		t.Errorf("the instance shows %q: a usage report or a usage-interval answer reached the core", got)
	}
	s.answer(g, proto.MessageResult{ID: "reload-1", Type: proto.MessageReload, TaskID: task, OK: true})
	s.eventually("a reload result still shown", func() (bool, string) {
		got := s.instanceMessage("game")
		return got == "reload ok", got
	})
}
