package scheduler

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/prometheus/client_golang/prometheus"
)

// The status updates and offers queued behind an event are gathered into
// one of each, in their order, and the executors' messages beside them; a
// rescind ends the gathering, to be the next input, and what came after
// it stays queued.
func TestGatherStatusUpdatesAndOffers(t *testing.T) {
	status := func(id string) event {
		return event{in: StatusUpdates{Statuses: []mesos.TaskStatus{{TaskID: mesos.TaskID{Value: id}}}}, received: time.Unix(int64(len(id)), 0)}
	}
	offers := func(ids ...string) event {
		var in OffersIn
		for _, id := range ids {
			in.Offers = append(in.Offers, mesos.Offer{ID: mesos.OfferID{Value: id}})
		}
		return event{in: in}
	}
	events := make(chan event, 8)
	for _, ev := range []event{status("t2"), offers("o2", "o3"), {in: ExecutorMessage{ExecutorID: "e1"}}, status("t33"), {in: Rescind{OfferID: "o2"}}, status("t4"), offers("o4")} {
		events <- ev
	}
	g := gathered{offers: OffersIn{Offers: []mesos.Offer{{ID: mesos.OfferID{Value: "o1"}}}}}
	held := g.gather(events)
	var tasks, offered []string
	for _, st := range g.updates.Statuses {
		tasks = append(tasks, st.TaskID.Value)
	}
	for _, o := range g.offers.Offers {
		offered = append(offered, o.ID.Value)
	}
	if !slices.Equal(tasks, []string{"t2", "t33"}) || !slices.Equal(offered, []string{"o1", "o2", "o3"}) || len(g.received) != 2 {
		t.Fatalf("gathered updates %v (%d times), offers %v", tasks, len(g.received), offered)
	}
	if len(g.messages) != 1 || g.messages[0].in.(ExecutorMessage).ExecutorID != "e1" {
		t.Fatalf("gathered messages %v, want e1's", g.messages)
	}
	if r, ok := held.in.(Rescind); !ok || r.OfferID != "o2" {
		t.Fatalf("held %#v, want the rescind", held)
	}
	if len(events) != 2 {
		t.Fatalf("%d events left queued, want the 2 after the rescind", len(events))
	}
	if g := (gathered{}); g.gather(make(chan event)) != nil || len(g.updates.Statuses) != 0 {
		t.Fatal("an empty queue gathers nothing")
	}
}

// The step outputs queued behind one are stored with it, in order; the
// groups end when the queue is closed.
func TestQueuedOutputsGroupCommit(t *testing.T) {
	outputs := make(chan stepOutput, 4)
	for _, id := range []string{"a", "b", "c"} {
		outputs <- stepOutput{frameworkID: id}
	}
	var groups [][]string
	for group := range queuedGroups(outputs) {
		var ids []string
		for _, o := range group {
			ids = append(ids, o.frameworkID)
		}
		groups = append(groups, ids)
		if len(groups) == 1 {
			outputs <- stepOutput{frameworkID: "d"}
			close(outputs)
		}
	}
	if len(groups) != 2 || !slices.Equal(groups[0], []string{"a", "b", "c"}) || !slices.Equal(groups[1], []string{"d"}) {
		t.Fatalf("groups %v, want [a b c] then [d]", groups)
	}
}

// recordingCaller records when each call it takes starts and ends.
type recordingCaller struct {
	mu    sync.Mutex
	spans map[string][2]time.Time
}

func (r *recordingCaller) Call(_ context.Context, call *scheduler.Call) (mesos.Response, error) {
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	name := call.GetType().String()
	if m := call.GetMessage(); m != nil {
		name = string(m.Data)
	}
	if k := call.GetKill(); k != nil {
		name += " " + k.TaskID.Value
	}
	r.spans[name] = [2]time.Time{start, time.Now()}
	return nil, nil
}

// Messages to distinct executors go together; one to an executor already
// messaged waits for the one before, and an ordered call (KILL) for all
// before it.
func TestSendMessagesInParallelPerExecutor(t *testing.T) {
	d := &Driver{cfg: DriverConfig{Clock: clockwork.NewRealClock(), Metrics: NewMetrics(prometheus.NewRegistry())}, log: slog.New(slog.DiscardHandler)}
	r := &recordingCaller{spans: map[string][2]time.Time{}}
	message := func(executor, name string) *scheduler.Call { return calls.Message("agent", executor, []byte(name)) }
	d.send(context.Background(), r, "fw", []*scheduler.Call{
		message("e1", "first to e1"), message("e2", "to e2"), message("e1", "second to e1"), calls.Kill("t", "agent"), message("e3", "to e3"),
	})
	s := r.spans
	overlap := func(a, b string) bool { return s[a][0].Before(s[b][1]) && s[b][0].Before(s[a][1]) }
	switch {
	case len(s) != 5:
		t.Fatalf("%d calls made, want 5", len(s))
	case !overlap("first to e1", "to e2"):
		t.Error("messages to two executors went one after the other")
	case s["second to e1"][0].Before(s["first to e1"][1]):
		t.Error("the second message to e1 started before the first ended")
	case s["KILL t"][0].Before(s["second to e1"][1]) || s["KILL t"][0].Before(s["to e2"][1]):
		t.Error("KILL started before the calls before it ended")
	case s["to e3"][0].Before(s["KILL t"][1]):
		t.Error("a call after KILL started before it ended")
	}
}

// Kills go together, acknowledgements with them; a launch (ACCEPT) waits
// for the kills before it, and a kill for the launch before it.
func TestSendKillsInParallel(t *testing.T) {
	d := &Driver{cfg: DriverConfig{Clock: clockwork.NewRealClock(), Metrics: NewMetrics(prometheus.NewRegistry())}, log: slog.New(slog.DiscardHandler)}
	r := &recordingCaller{spans: map[string][2]time.Time{}}
	d.send(context.Background(), r, "fw", []*scheduler.Call{
		calls.Kill("t1", "agent"), calls.Kill("t2", "agent"), calls.Acknowledge("agent", "t0", []byte("u")),
		calls.Accept(calls.OfferOperations{}.WithOffers(mesos.OfferID{Value: "o1"})), calls.Kill("t3", "agent"),
	})
	s := r.spans
	overlap := func(a, b string) bool { return s[a][0].Before(s[b][1]) && s[b][0].Before(s[a][1]) }
	switch {
	case len(s) != 5:
		t.Fatalf("%d calls made, want 5: %v", len(s), s)
	case !overlap("KILL t1", "KILL t2") || !overlap("KILL t1", "ACKNOWLEDGE"):
		t.Error("kills and an acknowledgement went one after the other")
	case s["ACCEPT"][0].Before(s["KILL t1"][1]) || s["ACCEPT"][0].Before(s["KILL t2"][1]):
		t.Error("ACCEPT started before the kills before it ended")
	case s["KILL t3"][0].Before(s["ACCEPT"][1]):
		t.Error("a kill after ACCEPT started before it ended")
	}
}

// An executor's messages queued behind one are stepped together, after
// the status update gathered with them: a rollout's thousands of update
// answers make one step and one output, not one each.
func TestGatheredMessagesAreOneStep(t *testing.T) {
	d, _ := usageDriver(t)
	d.sub.events = make(chan event, 8)
	d.outputs = make(chan stepOutput, 8)
	for _, id := range []string{"e2", "e3"} {
		d.sub.events <- event{in: ExecutorMessage{ExecutorID: id}}
	}
	d.sub.events <- event{in: StatusUpdates{Statuses: []mesos.TaskStatus{{TaskID: mesos.TaskID{Value: "t1"}}}}}
	if err := d.stepGathering(context.Background(), ExecutorMessage{ExecutorID: "e1"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(d.outputs); n != 2 {
		t.Fatalf("%d steps for a status update and 3 messages, want 2: the update, then the messages", n)
	}
}
