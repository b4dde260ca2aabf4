package mesosoperator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	mastercalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

var testCodecs = map[string]encoding.Codec{"protobuf": mesoswire.Protobuf, "json": mesoswire.JSON}

// startCluster runs a dev cluster (simulated executors, fast timers) with
// two agents: game-1 (zone=sz) and game-2.
func startCluster(t *testing.T) *devcluster.Cluster {
	t.Helper()
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr:          "127.0.0.1:0",
		AllocationInterval:  devcluster.Duration(50 * time.Millisecond),
		SimulatedStartDelay: devcluster.Duration(20 * time.Millisecond),
		WorkDir:             t.TempDir(),
		Logger:              testlog.New(t),
		Agents: []devcluster.AgentSpec{
			{Hostname: "game-1", Attributes: []devcluster.AttributeSpec{devcluster.TextAttribute("zone", "sz")}},
			{Hostname: "game-2"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func newClient(t *testing.T, masterURL string, codec encoding.Codec) *mesosoperator.Client {
	t.Helper()
	cl, err := mesosoperator.New(masterURL, mesosoperator.WithCodec(codec))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// offerOf waits for an offer of the agent with that hostname.
func offerOf(f *devclustertest.Framework, hostname string) mesos.Offer {
	var found mesos.Offer
	f.Await("an offer of "+hostname, func(e *scheduler.Event) bool {
		if e.Type != scheduler.Event_OFFERS {
			return false
		}
		for _, o := range e.Offers.Offers {
			if o.Hostname == hostname {
				found = o
				return true
			}
		}
		return false
	})
	return found
}

// launch runs one task (0.5 cpus, 64 MB) under an executor (0.1 cpus,
// 32 MB) on the offer's agent and waits until it runs.
func launch(f *devclustertest.Framework, o mesos.Offer, taskID string) {
	cmd := "true"
	ex := mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: taskID + "-executor"},
		FrameworkID: &mesos.FrameworkID{Value: f.ID},
		Command:     &mesos.CommandInfo{Value: &cmd},
		Resources:   []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32), devclustertest.Scalar("disk", 10)},
	}
	task := mesos.TaskInfo{
		Name:      taskID,
		TaskID:    mesos.TaskID{Value: taskID},
		AgentID:   o.AgentID,
		Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.5), devclustertest.Scalar("mem", 64)},
	}
	f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, task)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	f.AwaitAck(taskID, mesos.TASK_RUNNING, nil)
}

func agentNamed(t *testing.T, agents []mesosoperator.Agent, hostname string) mesosoperator.Agent {
	t.Helper()
	for _, a := range agents {
		if a.Hostname == hostname {
			return a
		}
	}
	t.Fatalf("no agent %s in %+v", hostname, agents)
	return mesosoperator.Agent{}
}

// GetAgents against the dev cluster, in both media types: every agent
// with its hostname, attributes, total resources and what its task and
// executor hold.
func TestGetAgents(t *testing.T) {
	for name, codec := range testCodecs {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t)
			cl := newClient(t, c.MasterURL(), codec)
			f := devclustertest.Subscribe(t, c.MasterURL(), "operator-test")
			o := offerOf(f, "game-1")
			launch(f, o, "t1")

			agents, err := cl.GetAgents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(agents) != 2 {
				t.Fatalf("%d agents, want 2", len(agents))
			}
			a := agentNamed(t, agents, "game-1")
			if a.ID != o.AgentID.Value || !a.Active || a.Deactivated || a.Recovered || a.Drain != nil || a.RegisteredAt.IsZero() ||
				a.Version == "" || !strings.HasPrefix(a.PID, "slave(1)@") || a.Endpoint() != "game-1:5051" {
				t.Errorf("game-1 %+v (endpoint %q)", a, a.Endpoint())
			}
			if v, ok := a.Attributes["zone"]; !ok || v.String() != "sz" {
				t.Errorf("attributes %v, want zone=sz", a.Attributes)
			}
			if a.Total.CPUs != 4 || a.Total.Mem != 8192 || len(a.Total.Ports) != 1 || a.Total.Ports[0].Begin != 31000 {
				t.Errorf("total %+v", a.Total)
			}
			if math.Abs(a.Allocated.CPUs-0.6) > 1e-9 || a.Allocated.Mem != 96 {
				t.Errorf("allocated %+v, want the task's and the executor's 0.6 cpus and 96 MB", a.Allocated)
			}
			if b := agentNamed(t, agents, "game-2"); b.Allocated.CPUs != 0 || len(b.Attributes) != 0 {
				t.Errorf("game-2 %+v", b)
			}
		})
	}
}

// An agent's endpoint is the address of its PID (slave(1)@ip:port);
// one recovered from the master's registry has none, only its hostname
// and port.
func TestAgentEndpoint(t *testing.T) {
	for _, tc := range []struct {
		agent mesosoperator.Agent
		want  string
	}{
		{mesosoperator.Agent{Hostname: "agent-1", Port: 5051, PID: "slave(1)@10.0.0.1:5051"}, "10.0.0.1:5051"},
		{mesosoperator.Agent{Hostname: "agent-1", Port: 5051, Recovered: true}, "agent-1:5051"},
		{mesosoperator.Agent{Hostname: "agent-1"}, ""},
	} {
		if got := tc.agent.Endpoint(); got != tc.want {
			t.Errorf("%+v.Endpoint() = %q, want %q", tc.agent, got, tc.want)
		}
	}
}

// DrainAgent, DeactivateAgent and ReactivateAgent against the dev
// cluster: the drain shows DRAINING until the killed task's update is
// acknowledged, then DRAINED; reactivation is refused while draining and
// names the call.
func TestDrainDeactivateReactivate(t *testing.T) {
	for name, codec := range testCodecs {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t)
			cl := newClient(t, c.MasterURL(), codec)
			ctx := context.Background()
			f := devclustertest.Subscribe(t, c.MasterURL(), "operator-test")
			o := offerOf(f, "game-1")
			launch(f, o, "t1")
			id := o.AgentID.Value

			if err := cl.DrainAgent(ctx, id, 0, false); err != nil {
				t.Fatal(err)
			}
			killed := f.Await("t1 TASK_KILLED", func(e *scheduler.Event) bool {
				return e.Type == scheduler.Event_UPDATE && e.Update.Status.GetState() == mesos.TASK_KILLED
			}).Update.Status
			if killed.GetReason() != mesos.REASON_AGENT_DRAINING {
				t.Errorf("reason %s", killed.GetReason())
			}
			agents, err := cl.GetAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a := agentNamed(t, agents, "game-1")
			if a.Active || !a.Deactivated || a.Drain == nil || a.Drain.State != mesosoperator.Draining || a.Drain.MaxGracePeriod != 0 ||
				a.Drain.MarkGone || a.Drain.EstimatedStart.IsZero() {
				t.Fatalf("draining agent %+v drain %+v", a, a.Drain)
			}
			err = cl.ReactivateAgent(ctx, id)
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "REACTIVATE_AGENT") ||
				!strings.Contains(err.Error(), "Agent is still in the DRAINING state") {
				t.Errorf("reactivating a draining agent: %v", err)
			}
			f.Call(calls.Acknowledge(killed.AgentID.Value, killed.TaskID.Value, killed.UUID))
			agents, err = cl.GetAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if a := agentNamed(t, agents, "game-1"); a.Drain == nil || a.Drain.State != mesosoperator.Drained {
				t.Errorf("after the acknowledgement: %+v", a.Drain)
			}
			if err := cl.ReactivateAgent(ctx, id); err != nil {
				t.Fatal(err)
			}
			agents, err = cl.GetAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if a := agentNamed(t, agents, "game-1"); !a.Active || a.Deactivated || a.Drain != nil {
				t.Errorf("reactivated agent %+v", a)
			}

			b := agentNamed(t, agents, "game-2")
			if err := cl.DeactivateAgent(ctx, b.ID); err != nil {
				t.Fatal(err)
			}
			agents, err = cl.GetAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b := agentNamed(t, agents, "game-2"); b.Active || !b.Deactivated || b.Drain != nil {
				t.Errorf("deactivated agent %+v", b)
			}
		})
	}
}

// A maintenance window on game-1 sends the framework using it an inverse
// offer; its answer shows in GetMaintenanceStatus.
func TestGetMaintenanceStatus(t *testing.T) {
	for name, codec := range testCodecs {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t)
			cl := newClient(t, c.MasterURL(), codec)
			f := devclustertest.Subscribe(t, c.MasterURL(), "operator-test")
			launch(f, offerOf(f, "game-1"), "t1")

			status, err := cl.GetMaintenanceStatus(context.Background())
			if err != nil || len(status.Draining) != 0 || len(status.Down) != 0 {
				t.Fatalf("status before any schedule: %+v %v", status, err)
			}
			host, ip := "game-1", "127.0.0.1"
			schedule := maintenance.Schedule{Windows: []maintenance.Window{{
				MachineIDs:     []mesos.MachineID{{Hostname: &host, IP: &ip}},
				Unavailability: mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: time.Now().Add(time.Hour).UnixNano()}},
			}}}
			// The client has no call to write the schedule: mesos-go's
			// own master client does.
			sender := httpmaster.NewSender(httpcli.New(httpcli.Endpoint(c.MasterURL()+"/api/v1"), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON])).Send)
			if err := mastercalls.SendNoData(context.Background(), sender, mastercalls.NonStreaming(mastercalls.UpdateMaintenanceSchedule(schedule))); err != nil {
				t.Fatal(err)
			}
			io := f.Await("INVERSE_OFFERS", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_INVERSE_OFFERS }).InverseOffers.InverseOffers[0]
			f.Call(calls.AcceptInverseOffers(io.OfferID))

			status, err = cl.GetMaintenanceStatus(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(status.Draining) != 1 || status.Draining[0].Machine != (mesosoperator.Machine{Hostname: "game-1", IP: "127.0.0.1"}) {
				t.Fatalf("status %+v", status)
			}
			answers := status.Draining[0].Answers
			if len(answers) != 1 || answers[0].FrameworkID != f.ID || answers[0].Answer != "ACCEPT" || answers[0].At.IsZero() {
				t.Errorf("answers %+v", answers)
			}
		})
	}
}

// newerMaster stands for a master newer than mesos-go's types: it passes
// calls to the dev cluster and adds to every GET_AGENTS agent a
// capability and a drain state no released Mesos has.
func newerMaster(t *testing.T, c *devcluster.Cluster) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, c.MasterURL()+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode == http.StatusOK && len(body) > 0 {
			body = fromTheFuture(t, ct, body)
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func fromTheFuture(t *testing.T, contentType string, body []byte) []byte {
	if contentType == "application/x-protobuf" {
		var r master.Response
		if err := r.Unmarshal(body); err != nil {
			t.Errorf("proxy: %v", err)
			return body
		}
		for i := range r.GetGetAgents().GetAgents() {
			a := &r.GetAgents.Agents[i]
			a.Capabilities = append(a.Capabilities, mesos.AgentInfo_Capability{Type: 42})
			a.DrainInfo = &mesos.DrainInfo{State: 7}
		}
		out, err := r.Marshal()
		if err != nil {
			t.Errorf("proxy: %v", err)
		}
		return out
	}
	var r map[string]any
	if err := json.Unmarshal(body, &r); err != nil {
		t.Errorf("proxy: %v", err)
		return body
	}
	for _, a := range r["get_agents"].(map[string]any)["agents"].([]any) {
		agent := a.(map[string]any)
		agent["capabilities"] = append(agent["capabilities"].([]any), map[string]any{"type": "AGENT_TELEPATHY"})
		agent["drain_info"] = map[string]any{"state": "DRAIN_STATE_FROM_THE_FUTURE", "config": map[string]any{"mark_gone": false}}
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Errorf("proxy: %v", err)
	}
	return out
}

// A GET_AGENTS with enum values mesos-go's types do not know (a newer
// master) decodes: the unknown values are dropped, the rest is intact.
// mesos-go's own JSON decoding fails on the same response, which is the
// bug of the first release (mesos-facts.md, QUOTA_V2).
func TestGetAgentsFromANewerMaster(t *testing.T) {
	c := startCluster(t)
	srv := newerMaster(t, c)
	for name, codec := range testCodecs {
		t.Run(name, func(t *testing.T) {
			agents, err := newClient(t, srv.URL, codec).GetAgents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			a := agentNamed(t, agents, "game-1")
			if a.Drain == nil || a.Drain.State != mesosoperator.DrainUnknown || a.Total.CPUs != 4 || a.Attributes["zone"].String() != "sz" || !a.Active {
				t.Errorf("agent %+v drain %+v", a, a.Drain)
			}
		})
	}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1", strings.NewReader(`{"type":"GET_AGENTS"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r master.Response
	if err := json.Unmarshal(body, &r); err == nil {
		t.Error("mesos-go's own JSON decoding took the newer master's response; the test proves nothing")
	}
}

// A master that is not the leader redirects (307) to the leader; the
// client follows, body and all.
func TestFollowsTheLeaderRedirect(t *testing.T) {
	c := startCluster(t)
	leader, _ := url.Parse(c.MasterURL())
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Mesos' redirect: a scheme-relative Location.
		http.Redirect(w, r, "//"+leader.Host+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(follower.Close)
	agents, err := newClient(t, follower.URL, mesoswire.Protobuf).GetAgents(context.Background())
	if err != nil || len(agents) != 2 {
		t.Fatalf("GetAgents through the follower: %d agents, %v", len(agents), err)
	}
}

// Bad input is refused before anything is sent, naming the field; the
// master's refusals and an unreachable master name the call; credentials
// in the master URL never show.
func TestErrors(t *testing.T) {
	c := startCluster(t)
	cl := newClient(t, c.MasterURL(), mesoswire.JSON)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		err   error
		class error
		want  []string
	}{
		{"empty agent ID", cl.DrainAgent(ctx, "", 0, false), errdefs.ErrInvalidArgument, []string{"DRAIN_AGENT", "agent_id"}},
		{"negative grace period", cl.DrainAgent(ctx, "a", -time.Second, false), errdefs.ErrInvalidArgument, []string{"DRAIN_AGENT", "max_grace_period"}},
		{"unknown agent", cl.DrainAgent(ctx, "nope", mesosoperator.NoMaxGracePeriod, false), errdefs.ErrInvalidArgument, []string{"DRAIN_AGENT", "400 Bad Request", "Unknown agent"}},
		{"deactivate unknown agent", cl.DeactivateAgent(ctx, "nope"), errdefs.ErrInvalidArgument, []string{"DEACTIVATE_AGENT", "Unknown agent"}},
		{"reactivate an active agent", cl.ReactivateAgent(ctx, c.Agents()[0]), errdefs.ErrInvalidArgument, []string{"REACTIVATE_AGENT", "Agent is not deactivated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.class) {
				t.Errorf("%v: want %v", tc.err, tc.class)
			}
			for _, w := range tc.want {
				if tc.err == nil || !strings.Contains(tc.err.Error(), w) {
					t.Errorf("%v: want it to say %q", tc.err, w)
				}
			}
		})
	}

	if _, err := mesosoperator.New("ftp://master:5050"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("ftp URL: %v", err)
	}
	if _, err := mesosoperator.New("http://master:5050", mesosoperator.WithCodec(encoding.Codec{Name: "xml"})); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("xml codec: %v", err)
	}

	// Nothing listens where the master was.
	gone := startCluster(t)
	u, _ := url.Parse(gone.MasterURL())
	gone.Stop()
	u.User = url.UserPassword("operator", "s3cret-pw")
	cl = newClient(t, u.String(), mesoswire.Protobuf)
	_, err := cl.GetAgents(ctx)
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "GET_AGENTS") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("unreachable master: %v", err)
	}
	if strings.Contains(cl.Endpoint(), "s3cret-pw") {
		t.Errorf("endpoint %s shows the password", cl.Endpoint())
	}
	if _, err := mesosoperator.New("http://operator:s3cret-pw@/api"); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("URL without a host: %v", err)
	}
}

// The client sends what Mesos expects: the call in the codec's media
// type, asking for the same back.
func TestRequestHeaders(t *testing.T) {
	for name, codec := range testCodecs {
		t.Run(name, func(t *testing.T) {
			var got http.Header
			var body []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Header.Clone()
				body, _ = io.ReadAll(r.Body)
				w.WriteHeader(http.StatusOK)
			}))
			t.Cleanup(srv.Close)
			if err := newClient(t, srv.URL, codec).DrainAgent(context.Background(), "agent-1", 90*time.Second, true); err != nil {
				t.Fatal(err)
			}
			ct := codec.Type.ContentType()
			if got.Get("Content-Type") != ct || got.Get("Accept") != ct {
				t.Errorf("headers %v, want %s", got, ct)
			}
			var call master.Call
			if err := codec.NewDecoder(encoding.SourceReader(bytes.NewReader(body))).Decode(&call); err != nil {
				t.Fatal(err)
			}
			d := call.GetDrainAgent()
			if call.Type != master.Call_DRAIN_AGENT || d.AgentID.Value != "agent-1" || d.GetMaxGracePeriod().GetSeconds() != 90 || !d.GetMarkGone() {
				t.Errorf("call %+v", call)
			}
		})
	}
}
