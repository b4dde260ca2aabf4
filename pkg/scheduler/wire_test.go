package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire/mesoswiretest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	bcsscheduler "github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// The framework ID in the scheduler recording of a real Mesos 1.12.
const recordedFrameworkID = "5ee7c0de-0000-4000-8000-000000000001-0006"

// recordedMaster is a Mesos master that answers SUBSCRIBE with a recorded
// event stream and every other call with 202, and remembers the calls.
type recordedMaster struct {
	t   *testing.T
	srv *httptest.Server
	// streams[i] answers the i-th SUBSCRIBE (the last one repeats).
	streams     [][]byte
	contentType string

	mu         sync.Mutex
	subscribes []scheduler.Call
	calls      []scheduler.Call
}

func newRecordedMaster(t *testing.T, contentType string, streams ...[]byte) *recordedMaster {
	m := &recordedMaster{t: t, streams: streams, contentType: contentType}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *recordedMaster) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var call scheduler.Call
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	if mt == string(mesoswire.Protobuf.Type) {
		err = call.Unmarshal(body)
	} else {
		err = json.Unmarshal(body, &call)
	}
	if err != nil || mt != m.contentType {
		http.Error(w, fmt.Sprintf("content type %q: %v", mt, err), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	if call.Type != scheduler.Call_SUBSCRIBE {
		m.calls = append(m.calls, call)
		m.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	n := len(m.subscribes)
	m.subscribes = append(m.subscribes, call)
	m.mu.Unlock()
	stream := m.streams[min(n, len(m.streams)-1)]
	w.Header().Set("Content-Type", m.contentType)
	w.Header().Set("Mesos-Stream-Id", fmt.Sprintf("stream-%d", n))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(stream)
	w.(http.Flusher).Flush()
	<-r.Context().Done() // the stream stays open until the scheduler leaves
}

func (m *recordedMaster) snapshot() (subscribes, calls []scheduler.Call) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]scheduler.Call(nil), m.subscribes...), append([]scheduler.Call(nil), m.calls...)
}

// schedulerRecording is the real master's SUBSCRIBED, HEARTBEAT and
// OFFERS, in JSON as recorded or transcoded to protobuf, where the
// capability QUOTA_V2 (3 in Mesos 1.12) stays as the number it is.
func schedulerRecording(t *testing.T, codec encoding.Codec) []byte {
	if codec.Name == mesoswire.NameJSON {
		return mesoswiretest.Recording(t, mesoswiretest.SchedulerSubscribe)
	}
	return mesoswiretest.Protobuf(t, mesoswiretest.SchedulerSubscribe, func(e *scheduler.Event) {
		if s := e.GetSubscribed(); s != nil {
			s.MasterInfo.Capabilities[2].Type = 3
		}
	})
}

func runDriver(t *testing.T, cfg bcsscheduler.DriverConfig) {
	t.Helper()
	d, err := bcsscheduler.NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("driver: %v", err)
		}
	})
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	eventuallyWithin(t, 15*time.Second, what, cond)
}

// eventuallyWithin is eventually for what must hold within limit.
func eventuallyWithin(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

// What a real Mesos 1.12 master sends — SUBSCRIBED with the
// capability QUOTA_V2 that mesos-go does not know, HEARTBEAT, OFFERS —
// goes through the driver's own HTTP and decoding path, in both media
// types: the framework ID is stored, the offered agent recorded, the offer
// answered under that framework and stream, and nothing subscribes twice.
func TestDriverDecodesARealMasterStream(t *testing.T) {
	for _, codec := range []encoding.Codec{mesoswire.Protobuf, mesoswire.JSON} {
		t.Run(codec.Name, func(t *testing.T) {
			st := newStore(t)
			reg := registry.New(st, time.Now)
			master := newRecordedMaster(t, string(codec.Type), schedulerRecording(t, codec))
			runDriver(t, bcsscheduler.DriverConfig{
				Masters: []string{master.srv.URL}, Registry: reg, Store: st, Encoding: codec, TickInterval: 20 * time.Millisecond,
			})
			ctx := context.Background()
			eventually(t, "the offer declined", func() (bool, string) {
				_, calls := master.snapshot()
				for _, c := range calls {
					if c.Type == scheduler.Call_DECLINE && c.FrameworkID.GetValue() == recordedFrameworkID &&
						len(c.Decline.OfferIDs) == 1 && c.Decline.OfferIDs[0].Value == "5ee7c0de-0000-4000-8000-000000000001-O9" {
						return true, ""
					}
				}
				return false, fmt.Sprint(calls)
			})
			if id, err := reg.FrameworkID(ctx); err != nil || id != recordedFrameworkID {
				t.Errorf("stored framework ID %q, %v", id, err)
			}
			agents, err := reg.ListAgents(ctx)
			if err != nil || len(agents) != 1 || agents[0].ID != "5ee7c0de-0000-4000-8000-000000000001-S0" ||
				agents[0].Hostname != "127.0.0.1" || agents[0].Attributes["idc"] != "sz" || agents[0].Attributes["rack"] != "r1" {
				t.Errorf("agents %+v, %v", agents, err)
			}
			subscribes, _ := master.snapshot()
			if len(subscribes) != 1 {
				t.Errorf("%d SUBSCRIBE calls, want 1", len(subscribes))
			}
			if info := subscribes[0].Subscribe.FrameworkInfo; info.GetID() != nil || !info.GetCheckpoint() {
				t.Errorf("first SUBSCRIBE framework info %+v", info)
			}
		})
	}
}

// A SUBSCRIBED the driver cannot decode still names the
// framework. The driver stores that ID and subscribes again with it, so
// the master does not register a second framework.
func TestDriverKeepsTheFrameworkIDOfAnUndecodableSubscribed(t *testing.T) {
	const salvaged = "5ee7c0de-0000-4000-8000-00000000000f-0042" // as long as the recorded ID
	var bad bytes.Buffer
	frame := `{"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"` + salvaged + `"},"heartbeat_interval_seconds":"fifteen"}}`
	if err := recordio.NewWriter(&bad).WriteFrame([]byte(frame)); err != nil {
		t.Fatal(err)
	}
	good := bytes.ReplaceAll(schedulerRecording(t, mesoswire.JSON), []byte(recordedFrameworkID), []byte(salvaged))
	st := newStore(t)
	reg := registry.New(st, time.Now)
	master := newRecordedMaster(t, string(mesoswire.JSON.Type), bad.Bytes(), good)
	runDriver(t, bcsscheduler.DriverConfig{
		Masters: []string{master.srv.URL}, Registry: reg, Store: st, Encoding: mesoswire.JSON, TickInterval: 20 * time.Millisecond,
	})
	eventually(t, "a second SUBSCRIBE", func() (bool, string) {
		subscribes, _ := master.snapshot()
		return len(subscribes) >= 2, fmt.Sprint(len(subscribes))
	})
	subscribes, _ := master.snapshot()
	if id := subscribes[0].Subscribe.FrameworkInfo.GetID(); id != nil {
		t.Errorf("first SUBSCRIBE carried framework ID %q", id.Value)
	}
	again := subscribes[1]
	if again.Subscribe.FrameworkInfo.GetID().GetValue() != salvaged || again.FrameworkID.GetValue() != salvaged {
		t.Errorf("second SUBSCRIBE: framework_info.id %q, framework_id %q; want %q", again.Subscribe.FrameworkInfo.GetID().GetValue(), again.FrameworkID.GetValue(), salvaged)
	}
	eventually(t, "the ID stored", func() (bool, string) {
		id, err := reg.FrameworkID(context.Background())
		return id == salvaged, fmt.Sprint(id, err)
	})
}
