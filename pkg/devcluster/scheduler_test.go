package devcluster_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// Scheduler HTTP API: SUBSCRIBE answers a RecordIO stream whose first
// event is SUBSCRIBED with heartbeat_interval_seconds (15 by default), in
// both JSON and protobuf.
func TestSubscribeWithMesosGoClient(t *testing.T) {
	c := startCluster(t, nil)
	for name, codec := range map[string]encoding.Codec{"json": jsonCodec, "protobuf": protoCodec} {
		t.Run(name, func(t *testing.T) {
			cli, err := trySubscribe(t, c.MasterURL(), frameworkInfo(), codec)
			if err != nil {
				t.Fatal(err)
			}
			sub := cli.await("SUBSCRIBED", isType(scheduler.Event_SUBSCRIBED)).Subscribed
			if sub.FrameworkID.GetValue() == "" {
				t.Fatal("SUBSCRIBED without framework_id")
			}
			if got := sub.GetHeartbeatIntervalSeconds(); got != 15 {
				t.Errorf("heartbeat_interval_seconds = %v, want 15", got)
			}
			if sub.MasterInfo == nil || sub.MasterInfo.ID != c.ID() {
				t.Errorf("master_info = %v, want id %s", sub.MasterInfo, c.ID())
			}
			cli.fwID = sub.FrameworkID.Value
			cli.await("OFFERS", isType(scheduler.Event_OFFERS))
			// Later calls carry Mesos-Stream-Id (httpsched adds it) and
			// answer 202.
			cli.mustCall(calls.Revive())
		})
	}
}

// HEARTBEAT events arrive every heartbeat interval.
func TestHeartbeats(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.HeartbeatInterval = devcluster.Duration(50 * time.Millisecond) })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	for i := 0; i < 3; i++ {
		s.await("HEARTBEAT", isType(scheduler.Event_HEARTBEAT))
	}
}

// rawSubscribe sends SUBSCRIBE with net/http and returns the response.
func rawSubscribe(t *testing.T, c *devcluster.Cluster, header map[string]string) *http.Response {
	t.Helper()
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"raw","failover_timeout":60}}}`
	req, _ := http.NewRequest(http.MethodPost, c.MasterURL()+"/api/v1/scheduler", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readRecord reads one RecordIO record: "<length>\n<bytes>".
func readRecord(t *testing.T, r *bufio.Reader) []byte {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read record length: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("record length %q: %v", line, err)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func rawCall(t *testing.T, c *devcluster.Cluster, contentType, streamID, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.MasterURL()+"/api/v1/scheduler", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if streamID != "" {
		req.Header.Set("Mesos-Stream-Id", streamID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The HTTP-level contract of docs/scheduler-http-api.md and
// src/master/http.cpp: headers, status codes and error bodies.
func TestSchedulerHTTPContract(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.NoAgents = true })
	resp := rawSubscribe(t, c, map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SUBSCRIBE status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	streamID := resp.Header.Get("Mesos-Stream-Id")
	if streamID == "" {
		t.Fatal("no Mesos-Stream-Id header")
	}
	// A 1.12 master's SUBSCRIBED names capabilities mesos-go's JSON
	// decoder rejects (QUOTA_V2): read it as a client of any age can.
	var ev struct {
		Type       string `json:"type"`
		Subscribed struct {
			FrameworkID struct{ Value string } `json:"framework_id"`
		} `json:"subscribed"`
	}
	if err := json.Unmarshal(readRecord(t, bufio.NewReader(resp.Body)), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "SUBSCRIBED" {
		t.Fatalf("first event %s", ev.Type)
	}
	fwID := ev.Subscribed.FrameworkID.Value
	revive := `{"type":"REVIVE","framework_id":{"value":"` + fwID + `"}}`
	accept := `{"type":"ACCEPT","framework_id":{"value":"` + fwID + `"},"accept":{"offer_ids":[{"value":"nope"}],"operations":[]}}`

	tests := []struct {
		name        string
		contentType string
		streamID    string
		body        string
		wantCode    int
		wantBody    string
	}{
		{"accept answers 202 with an empty body", "application/json", streamID, accept, http.StatusAccepted, ""},
		{"missing stream id", "application/json", "", revive, http.StatusBadRequest, "All non-subscribe calls should include the 'Mesos-Stream-Id' header"},
		{"wrong stream id", "application/json", "other", revive, http.StatusBadRequest, "The stream ID 'other' included in this request didn't match the stream ID currently associated with framework ID " + fwID},
		{"unknown framework", "application/json", streamID, `{"type":"REVIVE","framework_id":{"value":"unknown"}}`, http.StatusBadRequest, "Framework cannot be found"},
		{"no framework id", "application/json", streamID, `{"type":"REVIVE"}`, http.StatusBadRequest, "Failed to validate scheduler::Call: Expecting 'framework_id' to be present"},
		{"no content type", "", streamID, revive, http.StatusBadRequest, "Expecting 'Content-Type' to be present"},
		{"unsupported content type", "text/plain", streamID, revive, http.StatusUnsupportedMediaType, "Expecting 'Content-Type' of application/json or application/x-protobuf"},
		{"accept without accept field", "application/json", streamID, `{"type":"ACCEPT","framework_id":{"value":"` + fwID + `"}}`, http.StatusBadRequest, "Failed to validate scheduler::Call: Expecting 'accept' to be present"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := rawCall(t, c, tc.contentType, tc.streamID, tc.body)
			if code != tc.wantCode || body != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", code, body, tc.wantCode, tc.wantBody)
			}
		})
	}

	// A SUBSCRIBE must not carry a stream ID.
	if r := rawSubscribe(t, c, map[string]string{"Mesos-Stream-Id": streamID}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("SUBSCRIBE with Mesos-Stream-Id: status %d, want 400", r.StatusCode)
	}

	// Once the connection is gone the framework is not subscribed: 403.
	resp.Body.Close()
	deadline := time.Now().Add(waitTimeout)
	for {
		code, body := rawCall(t, c, "application/json", streamID, revive)
		if code == http.StatusForbidden && body == "Framework is not subscribed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after disconnect got %d %q, want 403", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Accept: application/recordio with Message-Accept picks the record
// encoding; protobuf records decode as scheduler.Event.
func TestSubscribeRecordIOProtobuf(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.NoAgents = true })
	resp := rawSubscribe(t, c, map[string]string{"Accept": "application/recordio", "Message-Accept": "application/x-protobuf"})
	if ct, mct := resp.Header.Get("Content-Type"), resp.Header.Get("Message-Content-Type"); ct != "application/recordio" || mct != "application/x-protobuf" {
		t.Fatalf("Content-Type %q, Message-Content-Type %q", ct, mct)
	}
	var ev scheduler.Event
	if err := ev.Unmarshal(readRecord(t, bufio.NewReader(resp.Body))); err != nil {
		t.Fatal(err)
	}
	if ev.Type != scheduler.Event_SUBSCRIBED {
		t.Fatalf("first event %s", ev.Type)
	}
}

// Each agent is offered whole (one offer per agent) with its configured
// resources and typed attributes.
func TestOffersOnePerAgent(t *testing.T) {
	c := startCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	offers := s.await("OFFERS", isType(scheduler.Event_OFFERS)).Offers.Offers
	if len(offers) != 3 {
		t.Fatalf("%d offers, want 3 (one per default agent)", len(offers))
	}
	hosts := map[string]bool{}
	for _, o := range offers {
		hosts[o.Hostname] = true
		rs := mesos.Resources(o.Resources)
		cpus, _ := resources.CPUs(rs...)
		mem, _ := resources.Memory(rs...)
		disk, _ := resources.Disk(rs...)
		ports, _ := resources.Ports(rs...)
		if cpus != 4 || mem != 8192 || disk != 20480 || len(ports) != 1 || ports[0].Begin != 31000 || ports[0].End != 32000 {
			t.Errorf("offer %s resources %v", o.ID.Value, rs)
		}
		if len(o.Attributes) != 2 || o.Attributes[0].Name != "rack" || o.Attributes[0].Type != mesos.TEXT {
			t.Errorf("offer %s attributes %v", o.ID.Value, o.Attributes)
		}
		if o.FrameworkID.Value != s.fwID {
			t.Errorf("offer framework %s", o.FrameworkID.Value)
		}
	}
	for _, h := range []string{"agent-1", "agent-2", "agent-3"} {
		if !hosts[h] {
			t.Errorf("no offer for %s", h)
		}
	}
	// Outstanding offers are not offered again.
	s.quiet("second OFFERS", 300*time.Millisecond, isType(scheduler.Event_OFFERS))
}

// MULTI_ROLE frameworks get allocation_info on offers and resources.
func TestMultiRoleOffersCarryAllocationInfo(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(func(i *mesos.FrameworkInfo) {
		i.Roles = []string{"game"}
		i.Capabilities = append(i.Capabilities, mesos.FrameworkInfo_Capability{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE})
	}), jsonCodec)
	o := s.awaitOffer()
	if o.AllocationInfo.GetRole() != "game" {
		t.Errorf("offer allocation_info %v", o.AllocationInfo)
	}
	for _, r := range o.Resources {
		if r.AllocationInfo.GetRole() != "game" {
			t.Errorf("resource %s allocation_info %v", r.Name, r.AllocationInfo)
		}
	}
}

func offerFor(s *testScheduler, agentID string) func(*scheduler.Event) bool {
	return func(e *scheduler.Event) bool {
		if e.Type != scheduler.Event_OFFERS {
			return false
		}
		for _, o := range e.Offers.Offers {
			if o.AgentID.Value == agentID {
				return true
			}
		}
		return false
	}
}

// DECLINE with filters.refuse_seconds keeps the agent away from this
// framework until the filter expires; then it is offered again.
func TestDeclineRefuseSeconds(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	start := time.Now()
	s.mustCall(calls.Decline(o.ID).With(calls.RefuseSeconds(600 * time.Millisecond)))
	s.quiet("offer during refusal", 400*time.Millisecond, offerFor(s, o.AgentID.Value))
	s.await("offer after refusal", offerFor(s, o.AgentID.Value))
	if waited := time.Since(start); waited < 600*time.Millisecond {
		t.Errorf("re-offered after %v, want >= 600ms", waited)
	}
}

// Without filters Mesos refuses for 5 seconds (here: Config.DefaultRefuse).
func TestDeclineDefaultFilter(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.Agents = []devcluster.AgentSpec{{}}
		cfg.DefaultRefuse = devcluster.Duration(500 * time.Millisecond)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	s.mustCall(calls.Decline(o.ID))
	s.quiet("offer during default refusal", 300*time.Millisecond, isType(scheduler.Event_OFFERS))
	s.await("offer after default refusal", isType(scheduler.Event_OFFERS))
}

// REVIVE clears refusal filters; SUPPRESS stops offers until REVIVE.
func TestReviveAndSuppress(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	s.mustCall(calls.Decline(o.ID).With(calls.RefuseSeconds(time.Hour)))
	s.quiet("offer while refused", 200*time.Millisecond, isType(scheduler.Event_OFFERS))
	s.mustCall(calls.Revive())
	o = s.awaitOffer()

	s.mustCall(calls.Suppress())
	s.mustCall(calls.Decline(o.ID).With(calls.RefuseSeconds(0)))
	s.quiet("offer while suppressed", 300*time.Millisecond, isType(scheduler.Event_OFFERS))
	s.mustCall(calls.Revive())
	s.awaitOffer()
}

// Removing an agent rescinds its outstanding offers and sends FAILURE
// with the agent ID.
func TestRescindOnAgentRemoval(t *testing.T) {
	c := startCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	if err := c.RemoveAgent(o.AgentID.Value); err != nil {
		t.Fatal(err)
	}
	r := s.await("RESCIND", isType(scheduler.Event_RESCIND))
	if r.Rescind.OfferID != o.ID {
		t.Errorf("rescinded %s, want %s", r.Rescind.OfferID.Value, o.ID.Value)
	}
	f := s.await("FAILURE", isType(scheduler.Event_FAILURE))
	if f.Failure.AgentID.GetValue() != o.AgentID.Value || f.Failure.ExecutorID != nil {
		t.Errorf("FAILURE %v, want agent %s only", f.Failure, o.AgentID.Value)
	}
	// Using the rescinded offer drops the task.
	ex := executorInfo(s.fwID, "e1")
	launchGroup(s, o, ex, taskInfo(o, "t1"))
	st := s.await("TASK_DROPPED", isUpdate("t1", mesos.TASK_DROPPED)).Update.Status
	if st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Errorf("reason %s", st.GetReason())
	}
}

// GET /master/state lists frameworks with their tasks and agents with
// resources and attributes, like the Mesos master.
func TestMasterStateEndpoint(t *testing.T) {
	c := startCluster(t, nil)
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "web-1"))
	s.awaitAck("web-1", mesos.TASK_STARTING)
	s.awaitAck("web-1", mesos.TASK_RUNNING)

	resp, err := http.Get(c.MasterURL() + "/master/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var state struct {
		ID         string `json:"id"`
		Frameworks []struct {
			ID    string `json:"id"`
			Tasks []struct {
				ID         string         `json:"id"`
				State      string         `json:"state"`
				SlaveID    string         `json:"slave_id"`
				ExecutorID string         `json:"executor_id"`
				Resources  map[string]any `json:"resources"`
			} `json:"tasks"`
		} `json:"frameworks"`
		Slaves []struct {
			ID         string         `json:"id"`
			Hostname   string         `json:"hostname"`
			Resources  map[string]any `json:"resources"`
			Used       map[string]any `json:"used_resources"`
			Attributes map[string]any `json:"attributes"`
		} `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		t.Fatal(err)
	}
	if state.ID != c.ID() || len(state.Slaves) != 3 || len(state.Frameworks) != 1 {
		t.Fatalf("state: id %s, %d slaves, %d frameworks", state.ID, len(state.Slaves), len(state.Frameworks))
	}
	tasks := state.Frameworks[0].Tasks
	if len(tasks) != 1 || tasks[0].ID != "web-1" || tasks[0].State != "TASK_RUNNING" || tasks[0].SlaveID != o.AgentID.Value || tasks[0].ExecutorID != "e1" || tasks[0].Resources["cpus"] != 0.5 {
		t.Errorf("tasks %+v", tasks)
	}
	for _, a := range state.Slaves {
		if a.Resources["cpus"] != 4.0 || a.Resources["ports"] != "[31000-32000]" || a.Attributes["idc"] != "dev" {
			t.Errorf("slave %s: resources %v attributes %v", a.ID, a.Resources, a.Attributes)
		}
		if a.ID == o.AgentID.Value && a.Used["cpus"] != 0.6 {
			t.Errorf("slave %s used %v, want cpus 0.6 (task + executor)", a.ID, a.Used)
		}
	}
}

// RestartMaster drops every scheduler connection; the framework
// re-subscribes with its ID and finds its tasks still running.
func TestRestartMasterKeepsTasks(t *testing.T) {
	c := startCluster(t, nil)
	info := frameworkInfo()
	s := subscribe(t, c, info, jsonCodec)
	o := s.awaitOffer()
	launchGroup(s, o, executorInfo(s.fwID, "e1"), taskInfo(o, "t1"))
	s.awaitAck("t1", mesos.TASK_STARTING)
	s.awaitAck("t1", mesos.TASK_RUNNING)
	if err := c.RestartMaster(); err != nil {
		t.Fatal(err)
	}
	s.streamEnded()

	info.ID = &mesos.FrameworkID{Value: s.fwID}
	s2 := subscribe(t, c, info, jsonCodec)
	if s2.fwID != s.fwID {
		t.Fatalf("framework id %s after restart, want %s", s2.fwID, s.fwID)
	}
	s2.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"t1": o.AgentID.Value})))
	st := s2.await("reconciled t1", isTaskUpdate("t1")).Update.Status
	if st.GetState() != mesos.TASK_RUNNING || st.GetReason() != mesos.REASON_RECONCILIATION || len(st.UUID) != 0 {
		t.Errorf("reconciled %s %s uuid %x", st.GetState(), st.GetReason(), st.UUID)
	}
}

// A config file with agents, attributes and durations loads.
func TestLoadConfig(t *testing.T) {
	path := t.TempDir() + "/cluster.json"
	body := `{
	  "listen_addr": "127.0.0.1:0",
	  "allocation_interval": "250ms",
	  "default_refuse": 2,
	  "agents": [
	    {"hostname": "gs-1", "resources": {"cpus": 8, "mem": 16384, "ports": [{"begin": 40000, "end": 40010}]},
	     "attributes": [{"name": "zone", "text": "sz"}, {"name": "weight", "scalar": 1.5}, {"name": "tags", "set": ["a", "b"]}]}
	  ]
	}`
	if err := writeFile(path, body); err != nil {
		t.Fatal(err)
	}
	cfg, err := devcluster.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AllocationInterval.D() != 250*time.Millisecond || cfg.DefaultRefuse.D() != 2*time.Second || len(cfg.Agents) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	cfg.Logger = testlog.New(t)
	cfg.WorkDir = t.TempDir()
	c, err := devcluster.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	s := subscribe(t, c, frameworkInfo(), protoCodec)
	o := s.awaitOffer()
	if o.Hostname != "gs-1" || len(o.Attributes) != 3 || o.Attributes[1].Type != mesos.SCALAR || o.Attributes[2].Type != mesos.SET {
		t.Errorf("offer %s attributes %v", o.Hostname, o.Attributes)
	}
	if ports, _ := resources.Ports(o.Resources...); len(ports) != 1 || ports[0].Begin != 40000 {
		t.Errorf("ports %v", ports)
	}

	if err := writeFile(path, `{"agents":[{"attributes":[{"name":"x"}]}]}`); err != nil {
		t.Fatal(err)
	}
	bad, err := devcluster.LoadConfig(path)
	if err == nil {
		_, err = devcluster.Start(t.Context(), bad)
	}
	if err == nil {
		t.Error("attribute without a value was accepted")
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }
