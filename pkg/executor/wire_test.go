package executor_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	bcsexec "github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire/mesoswiretest"
)

// executorRecording is a real Mesos 1.12 agent's SUBSCRIBED and
// LAUNCH_GROUP for a custom executor of a checkpointing framework, in JSON
// as recorded or transcoded to protobuf.
func executorRecording(t *testing.T, codec encoding.Codec) []byte {
	if codec.Name == mesoswire.NameJSON {
		return mesoswiretest.Recording(t, mesoswiretest.ExecutorSubscribe)
	}
	return mesoswiretest.Protobuf[executor.Event](t, mesoswiretest.ExecutorSubscribe, nil)
}

// The recorded agent stream goes through the executor driver's
// own HTTP and decoding path in both media types: the task group reaches
// the runtime with its spec (bcs TaskInfo.data) and kill policy, and the
// executor's UPDATE names the recorded agent.
func TestDriverDecodesARealAgentStream(t *testing.T) {
	for _, codec := range []encoding.Codec{mesoswire.Protobuf, mesoswire.JSON} {
		t.Run(codec.Name, func(t *testing.T) {
			stream := executorRecording(t, codec)
			var mu sync.Mutex
			var updates []mesos.TaskStatus
			agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var call executor.Call
				var err error
				if r.Header.Get("Content-Type") == string(mesoswire.Protobuf.Type) {
					err = call.Unmarshal(body)
				} else {
					err = json.Unmarshal(body, &call)
				}
				if err != nil || r.Header.Get("Content-Type") != string(codec.Type) {
					http.Error(w, "bad call", http.StatusBadRequest)
					return
				}
				if call.Type == executor.Call_SUBSCRIBE {
					w.Header().Set("Content-Type", string(codec.Type))
					_, _ = w.Write(stream)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return
				}
				if call.Type == executor.Call_UPDATE {
					mu.Lock()
					updates = append(updates, call.Update.Status)
					mu.Unlock()
				}
				w.WriteHeader(http.StatusAccepted)
			}))
			defer agent.Close()
			rt := newFakeRuntime()
			env := config.Config{
				FrameworkID: "5ee7c0de-0000-4000-8000-000000000001-0005", ExecutorID: "demo_probe_0_1",
				Directory: t.TempDir(), AgentEndpoint: strings.TrimPrefix(agent.URL, "http://"),
				ExecutorShutdownGracePeriod: 5 * time.Second, Checkpoint: true,
				RecoveryTimeout: 15 * time.Minute, SubscriptionBackoffMax: 2 * time.Second,
			}
			d := bcsexec.New(bcsexec.Config{Env: env, Runtime: rt, Logger: testlog.New(t), Codec: codec})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = d.Run(ctx) }()

			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				n := len(updates)
				mu.Unlock()
				if n > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			rt.mu.Lock()
			launched := append([]bcsexec.Task(nil), rt.launched...)
			rt.mu.Unlock()
			if len(launched) != 1 {
				t.Fatalf("launched %d tasks, want the recorded one", len(launched))
			}
			task := launched[0]
			if task.ID() != "demo_probe_0_1_0" || task.KillGrace != 5*time.Second || task.Spec.Process == nil ||
				task.Spec.Process.ProcName != "gamesvr" || task.Spec.Instance.TaskGroupID != "demo_probe_0_1" || task.Spec.Ports[0].HostPort != 31239 {
				t.Errorf("launched %+v with spec %+v", task.Info.TaskID, task.Spec)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(updates) == 0 {
				t.Fatal("no UPDATE")
			}
			if up := updates[0]; up.GetState() != mesos.TASK_RUNNING || up.GetAgentID().GetValue() != "5ee7c0de-0000-4000-8000-000000000001-S0" || up.GetSource() != mesos.SOURCE_EXECUTOR {
				t.Errorf("first update %+v", up)
			}
		})
	}
}
