package executor_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
)

// fakeAgent speaks the agent side of the v1 executor API in JSON with
// RecordIO framing: SUBSCRIBE opens an event stream, UPDATE and MESSAGE
// answer 202. Tests push events, drop the stream and refuse subscriptions.
type fakeAgent struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	subscribes []executor.Call_Subscribe
	updates    []mesos.TaskStatus
	messages   [][]byte
	stream     chan *executor.Event
	dropStream chan struct{}
	refuse     bool
	changed    chan struct{}
}

func newFakeAgent(t *testing.T) *fakeAgent {
	a := &fakeAgent{t: t, changed: make(chan struct{}, 1)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// newFakeAgentTLS is a fake agent serving HTTPS only, as an agent with
// LIBPROCESS_SSL_ENABLED.
func newFakeAgentTLS(t *testing.T) *fakeAgent {
	a := &fakeAgent{t: t, changed: make(chan struct{}, 1)}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAgent) env(checkpoint bool) config.Config {
	cfg := config.Config{
		FrameworkID:                 "fw-1",
		ExecutorID:                  "exec-1",
		Directory:                   a.t.TempDir(),
		AgentEndpoint:               a.srv.Listener.Addr().String(),
		ExecutorShutdownGracePeriod: 5 * time.Second,
		Checkpoint:                  checkpoint,
	}
	cfg.Sandbox = cfg.Directory
	if checkpoint {
		cfg.RecoveryTimeout = 2 * time.Second
		cfg.SubscriptionBackoffMax = 50 * time.Millisecond
	}
	return cfg
}

func (a *fakeAgent) notify() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

func (a *fakeAgent) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var call executor.Call
	if err := json.Unmarshal(body, &call); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if call.FrameworkID.Value != "fw-1" || call.ExecutorID.Value != "exec-1" {
		http.Error(w, "wrong framework or executor", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	switch call.Type {
	case executor.Call_SUBSCRIBE:
		if a.refuse {
			a.mu.Unlock()
			http.Error(w, "agent recovering", http.StatusServiceUnavailable)
			return
		}
		a.subscribes = append(a.subscribes, *call.Subscribe)
		stream := make(chan *executor.Event, 64)
		drop := make(chan struct{})
		a.stream, a.dropStream = stream, drop
		a.mu.Unlock()
		a.notify()
		a.serveStream(w, r, stream, drop)
		return
	case executor.Call_UPDATE:
		a.updates = append(a.updates, call.Update.Status)
	case executor.Call_MESSAGE:
		a.messages = append(a.messages, call.Message.Data)
	}
	a.mu.Unlock()
	a.notify()
	w.WriteHeader(http.StatusAccepted)
}

func (a *fakeAgent) serveStream(w http.ResponseWriter, r *http.Request, stream chan *executor.Event, drop chan struct{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	write := func(e *executor.Event) {
		b, _ := json.Marshal(e)
		fmt.Fprintf(w, "%d\n%s", len(b), b)
		flusher.Flush()
	}
	write(&executor.Event{Type: executor.Event_SUBSCRIBED, Subscribed: &executor.Event_Subscribed{
		ExecutorInfo:  mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "exec-1"}},
		FrameworkInfo: mesos.FrameworkInfo{User: "root", Name: "test", Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE}}},
		AgentInfo:     mesos.AgentInfo{Hostname: "agent-1", ID: &mesos.AgentID{Value: "agent-1"}},
	}})
	for {
		select {
		case e := <-stream:
			write(e)
		case <-drop:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// send pushes an event on the current stream.
func (a *fakeAgent) send(e *executor.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stream <- e
}

// drop ends the current stream, as an agent restart would.
func (a *fakeAgent) drop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	close(a.dropStream)
}

func (a *fakeAgent) setRefuse(b bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refuse = b
}

// waitFor polls cond (under the agent's lock) until true.
func (a *fakeAgent) waitFor(what string, cond func() bool) {
	a.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		ok := cond()
		a.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-a.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			a.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// awaitUpdate waits for the n-th update (0-based) and returns it.
func (a *fakeAgent) awaitUpdate(n int) mesos.TaskStatus {
	a.t.Helper()
	a.waitFor(fmt.Sprintf("update #%d", n), func() bool { return len(a.updates) > n })
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.updates[n]
}

func (a *fakeAgent) ack(st mesos.TaskStatus) {
	a.send(&executor.Event{Type: executor.Event_ACKNOWLEDGED, Acknowledged: &executor.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}})
}
