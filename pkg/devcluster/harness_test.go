package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

var (
	jsonCodec  = mesoswire.JSON
	protoCodec = codecs.ByMediaType[codecs.MediaTypeProtobuf]
)

const waitTimeout = 10 * time.Second

// startCluster starts a dev cluster on a free port with fast timers; edit
// changes one field at a time from these defaults.
func startCluster(t *testing.T, edit func(*devcluster.Config)) *devcluster.Cluster {
	t.Helper()
	cfg := devcluster.Config{
		ListenAddr:          "127.0.0.1:0",
		AllocationInterval:  devcluster.Duration(50 * time.Millisecond),
		SimulatedStartDelay: devcluster.Duration(20 * time.Millisecond),
		WorkDir:             t.TempDir(),
		Logger:              testlog.New(t),
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := devcluster.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// frameworkInfo is a valid FrameworkInfo; opts edit it.
func frameworkInfo(opts ...func(*mesos.FrameworkInfo)) *mesos.FrameworkInfo {
	timeout := 60.0
	info := &mesos.FrameworkInfo{
		User:            "root",
		Name:            "devcluster-test",
		FailoverTimeout: &timeout,
		Capabilities:    []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}},
	}
	for _, o := range opts {
		o(info)
	}
	return info
}

func notPartitionAware(info *mesos.FrameworkInfo) { info.Capabilities = nil }

func failoverTimeout(d time.Duration) func(*mesos.FrameworkInfo) {
	return func(info *mesos.FrameworkInfo) {
		s := d.Seconds()
		info.FailoverTimeout = &s
	}
}

// testScheduler drives the dev cluster through mesos-go's own HTTP
// scheduler client (httpcli + httpsched), never through our code.
type testScheduler struct {
	t      *testing.T
	caller calls.Caller
	resp   mesos.Response
	fwID   string

	mu      sync.Mutex
	events  []*scheduler.Event
	closed  bool
	changed chan struct{}
}

func subscribe(t *testing.T, c *devcluster.Cluster, info *mesos.FrameworkInfo, codec encoding.Codec) *testScheduler {
	t.Helper()
	return subscribeAt(t, c.MasterURL(), info, codec)
}

// subscribeAt subscribes to the master at masterURL.
func subscribeAt(t *testing.T, masterURL string, info *mesos.FrameworkInfo, codec encoding.Codec) *testScheduler {
	t.Helper()
	s, err := trySubscribe(t, masterURL, info, codec)
	if err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	sub := s.await("SUBSCRIBED", isType(scheduler.Event_SUBSCRIBED))
	s.fwID = sub.Subscribed.FrameworkID.Value
	return s
}

func trySubscribe(t *testing.T, masterURL string, info *mesos.FrameworkInfo, codec encoding.Codec) (*testScheduler, error) {
	cli := httpcli.New(
		httpcli.Endpoint(masterURL+"/api/v1/scheduler"),
		httpcli.Codec(codec),
		httpcli.Do(httpcli.With(httpcli.Timeout(5*time.Second))),
	)
	s := &testScheduler{t: t, caller: httpsched.NewCaller(cli), changed: make(chan struct{}, 1)}
	resp, err := s.caller.Call(context.Background(), calls.Subscribe(info))
	if err != nil {
		return nil, err
	}
	s.resp = resp
	t.Cleanup(func() { resp.Close() })
	go s.readEvents()
	return s, nil
}

func (s *testScheduler) readEvents() {
	for {
		var e scheduler.Event
		err := s.resp.Decode(&e)
		s.mu.Lock()
		if err != nil {
			s.closed = true
		} else {
			s.events = append(s.events, &e)
		}
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// disconnect closes the subscription connection.
func (s *testScheduler) disconnect() { s.resp.Close() }

func (s *testScheduler) call(call *scheduler.Call) error {
	return calls.CallNoData(context.Background(), s.caller, call.With(calls.Framework(s.fwID)))
}

func (s *testScheduler) mustCall(call *scheduler.Call) {
	s.t.Helper()
	if err := s.call(call); err != nil {
		s.t.Fatalf("%s: %v", call.Type, err)
	}
}

// take removes and returns the first buffered event matching pred.
func (s *testScheduler) take(pred func(*scheduler.Event) bool) (*scheduler.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.events {
		if pred(e) {
			s.events = append(s.events[:i:i], s.events[i+1:]...)
			return e, false
		}
	}
	return nil, s.closed
}

// discard drops every buffered event matching pred.
func (s *testScheduler) discard(pred func(*scheduler.Event) bool) {
	for {
		if e, _ := s.take(pred); e == nil {
			return
		}
	}
}

// await waits for (and consumes) the first event matching pred.
func (s *testScheduler) await(what string, pred func(*scheduler.Event) bool) *scheduler.Event {
	s.t.Helper()
	return s.awaitWithin(what, waitTimeout, pred)
}

func (s *testScheduler) awaitWithin(what string, d time.Duration, pred func(*scheduler.Event) bool) *scheduler.Event {
	s.t.Helper()
	deadline := time.After(d)
	for {
		e, closed := s.take(pred)
		if e != nil {
			return e
		}
		if closed {
			s.t.Fatalf("event stream ended while waiting for %s; unconsumed: %s", what, s.describe())
		}
		select {
		case <-s.changed:
		case <-deadline:
			s.t.Fatalf("no %s within %v; unconsumed: %s", what, d, s.describe())
		}
	}
}

// quiet asserts that no event matching pred arrives within d.
func (s *testScheduler) quiet(what string, d time.Duration, pred func(*scheduler.Event) bool) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		if e, _ := s.take(pred); e != nil {
			s.t.Fatalf("unexpected %s: %v", what, e)
		}
		select {
		case <-s.changed:
		case <-deadline:
			return
		}
	}
}

// streamEnded waits for the event stream to end.
func (s *testScheduler) streamEnded() {
	s.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		select {
		case <-s.changed:
		case <-deadline:
			s.t.Fatal("event stream did not end")
		}
	}
}

func (s *testScheduler) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, e := range s.events {
		if e.Type == scheduler.Event_UPDATE {
			st := e.Update.Status
			parts = append(parts, fmt.Sprintf("UPDATE(%s %s %s %q)", st.TaskID.Value, st.GetState(), st.GetReason(), st.GetMessage()))
			continue
		}
		parts = append(parts, e.Type.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func isType(t scheduler.Event_Type) func(*scheduler.Event) bool {
	return func(e *scheduler.Event) bool { return e.Type == t }
}

func isUpdate(taskID string, state mesos.TaskState) func(*scheduler.Event) bool {
	return func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == taskID && e.Update.Status.GetState() == state
	}
}

func isTaskUpdate(taskID string) func(*scheduler.Event) bool {
	return func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == taskID
	}
}

// awaitOffer returns the first offer of the next OFFERS event.
func (s *testScheduler) awaitOffer() mesos.Offer {
	s.t.Helper()
	return s.await("OFFERS", isType(scheduler.Event_OFFERS)).Offers.Offers[0]
}

// ack acknowledges an update that carries a uuid.
func (s *testScheduler) ack(st mesos.TaskStatus) {
	s.t.Helper()
	if len(st.UUID) == 0 {
		s.t.Fatalf("update %s %s has no uuid to acknowledge", st.TaskID.Value, st.GetState())
	}
	s.mustCall(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
}

// awaitAck waits for an update of taskID in state and acknowledges it.
func (s *testScheduler) awaitAck(taskID string, state mesos.TaskState) mesos.TaskStatus {
	s.t.Helper()
	st := s.await(fmt.Sprintf("%s %s", taskID, state), isUpdate(taskID, state)).Update.Status
	s.ack(st)
	return st
}

// Fixtures: a valid executor and task for an offer, changed one field per
// test.

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func executorInfo(fwID, id string) mesos.ExecutorInfo {
	cmd := "sleep 1000"
	return mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: id},
		FrameworkID: &mesos.FrameworkID{Value: fwID},
		Command:     &mesos.CommandInfo{Value: &cmd},
		Resources:   []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32), scalar("disk", 10)},
	}
}

func taskInfo(o mesos.Offer, id string) mesos.TaskInfo {
	return mesos.TaskInfo{
		Name:      id,
		TaskID:    mesos.TaskID{Value: id},
		AgentID:   o.AgentID,
		Resources: []mesos.Resource{scalar("cpus", 0.5), scalar("mem", 64)},
	}
}

func launchGroup(s *testScheduler, o mesos.Offer, ex mesos.ExecutorInfo, tasks ...mesos.TaskInfo) {
	s.t.Helper()
	accept := calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, tasks...)}.WithOffers(o.ID)).
		With(calls.RefuseSeconds(0))
	s.mustCall(accept)
}

// testExecutorPath builds internal/testexecutor once per test binary.
var testExecutor struct {
	once sync.Once
	path string
	err  error
}

func buildTestExecutor(t *testing.T) string {
	t.Helper()
	testExecutor.once.Do(func() {
		dir, err := os.MkdirTemp("", "devcluster-testexecutor-")
		if err != nil {
			testExecutor.err = err
			return
		}
		path := filepath.Join(dir, "testexecutor")
		cmd := exec.Command("go", "build", "-o", path, "./internal/testexecutor")
		out, err := cmd.CombinedOutput()
		if err != nil {
			testExecutor.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		testExecutor.path = path
	})
	if testExecutor.err != nil {
		t.Fatalf("build test executor: %v", testExecutor.err)
	}
	return testExecutor.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, path := range []string{testExecutor.path, devclusterBinary.path} {
		if path != "" {
			_ = os.RemoveAll(filepath.Dir(path))
		}
	}
	os.Exit(code)
}
