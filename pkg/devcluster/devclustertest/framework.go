package devclustertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

// Timeout bounds every wait for an event.
const Timeout = 60 * time.Second

// Framework is a subscribed framework and the events it received.
type Framework struct {
	t      *testing.T
	caller calls.Caller
	// ID is the framework ID the master assigned.
	ID     string
	mu     sync.Mutex
	events []*scheduler.Event
	closed bool
	notify chan struct{}
}

// Checkpointing makes a framework checkpoint: its executors survive an
// agent restart.
func Checkpointing(info *mesos.FrameworkInfo) {
	on := true
	info.Checkpoint = &on
}

// Subscribe subscribes a PARTITION_AWARE framework named name, edited by
// opts, to the master at masterURL and waits for SUBSCRIBED.
func Subscribe(t *testing.T, masterURL, name string, opts ...func(*mesos.FrameworkInfo)) *Framework {
	t.Helper()
	return SubscribeOver(t, masterURL, name, nil, opts...)
}

// SubscribeOver is Subscribe through an HTTP client that conn configures
// (httpcli.TLSConfig, httpcli.BasicAuth).
func SubscribeOver(t *testing.T, masterURL, name string, conn []httpcli.ConfigOpt, opts ...func(*mesos.FrameworkInfo)) *Framework {
	t.Helper()
	cli := httpcli.New(httpcli.Endpoint(masterURL+"/api/v1/scheduler"), httpcli.Codec(mesoswire.JSON),
		httpcli.Do(httpcli.With(conn...)))
	f := &Framework{t: t, caller: httpsched.NewCaller(cli), notify: make(chan struct{}, 1)}
	timeout := 60.0
	info := &mesos.FrameworkInfo{User: "root", Name: name, FailoverTimeout: &timeout,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}}
	for _, opt := range opts {
		opt(info)
	}
	resp, err := f.caller.Call(context.Background(), calls.Subscribe(info))
	if err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	t.Cleanup(func() { resp.Close() })
	go func() {
		for {
			var e scheduler.Event
			err := resp.Decode(&e)
			f.mu.Lock()
			if err != nil {
				f.closed = true
			} else {
				f.events = append(f.events, &e)
			}
			f.mu.Unlock()
			select {
			case f.notify <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	f.ID = f.Await("SUBSCRIBED", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_SUBSCRIBED }).Subscribed.FrameworkID.Value
	return f
}

// Await removes and returns the first event matching pred, waiting for it
// up to Timeout; what names it in the failure.
func (f *Framework) Await(what string, pred func(*scheduler.Event) bool) *scheduler.Event {
	f.t.Helper()
	deadline := time.After(Timeout)
	for {
		f.mu.Lock()
		for i, e := range f.events {
			if pred(e) {
				f.events = append(f.events[:i:i], f.events[i+1:]...)
				f.mu.Unlock()
				return e
			}
		}
		var seen []string
		for _, e := range f.events {
			if e.Type == scheduler.Event_UPDATE {
				st := e.Update.Status
				seen = append(seen, fmt.Sprintf("UPDATE(%s %s %q)", st.TaskID.Value, st.GetState(), st.GetMessage()))
			} else {
				seen = append(seen, e.Type.String())
			}
		}
		closed := f.closed
		f.mu.Unlock()
		if closed {
			f.t.Fatalf("stream closed waiting for %s; have %v", what, seen)
		}
		select {
		case <-f.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			f.t.Fatalf("no %s; have %v", what, seen)
		}
	}
}

// Call sends a call as this framework.
func (f *Framework) Call(c *scheduler.Call) {
	f.t.Helper()
	if err := calls.CallNoData(context.Background(), f.caller, c.With(calls.Framework(f.ID))); err != nil {
		f.t.Fatalf("%s: %v", c.Type, err)
	}
}

// AwaitAck waits for an update of task in state (matching pred when not
// nil) and returns it. Every update of task up to it is acknowledged: the
// agent forwards a task's next update only once the previous one is (as
// Mesos' status update manager does).
func (f *Framework) AwaitAck(task string, state mesos.TaskState, pred func(mesos.TaskStatus) bool) mesos.TaskStatus {
	f.t.Helper()
	for {
		e := f.Await(fmt.Sprintf("%s %s", task, state), func(e *scheduler.Event) bool {
			return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == task
		})
		st := e.Update.Status
		f.Call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
		if st.GetState() == state && (pred == nil || pred(st)) {
			return st
		}
	}
}

// Scalar is a scalar resource.
func Scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

// AwaitOffer returns the first offer of the next OFFERS event.
func (f *Framework) AwaitOffer() mesos.Offer {
	f.t.Helper()
	return f.Await("OFFERS", func(ev *scheduler.Event) bool { return ev.Type == scheduler.Event_OFFERS }).Offers.Offers[0]
}
