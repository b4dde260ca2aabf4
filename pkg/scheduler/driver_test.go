package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// system is a scheduler driver against a dev cluster with simulated
// executors and an embedded etcd: the real components but the executors.
type system struct {
	t       *testing.T
	cluster *devcluster.Cluster
	etcd    *store.Embedded
	reg     *registry.Registry
	st      *store.Store
	driver  *scheduler.Driver
	cancel  context.CancelFunc
	done    chan error
	// agentSync is the driver's AgentSyncInterval.
	agentSync time.Duration
	// mesos and logger are the driver's (mesosconn_test.go).
	mesos  mesosconn.Config
	logger *slog.Logger
	// identities are the driver's (nil: none), asked again every
	// backoffMax (0: the default).
	identities scheduler.IdentitySource
	backoffMax time.Duration
}

// newStore starts an embedded etcd and opens a store on it.
func newStore(t *testing.T) *store.Store {
	st, _ := storetest.NewStore(t)
	return st
}

func startSystem(t *testing.T, agents ...devcluster.AgentSpec) *system {
	t.Helper()
	s := newSystem(t, agents...)
	s.startDriver()
	return s
}

// newSystem is startSystem before the driver starts.
func newSystem(t *testing.T, agents ...devcluster.AgentSpec) *system {
	t.Helper()
	return newSystemWith(t, nil, agents...)
}

// newSystemWith is newSystem with the dev cluster's config edited.
func newSystemWith(t *testing.T, edit func(*devcluster.Config), agents ...devcluster.AgentSpec) *system {
	t.Helper()
	ctx := context.Background()
	st, etcd := storetest.NewStore(t)
	cfg := devcluster.Config{
		ListenAddr:          "127.0.0.1:0",
		AllocationInterval:  devcluster.Duration(50 * time.Millisecond),
		SimulatedStartDelay: devcluster.Duration(20 * time.Millisecond),
		DefaultRefuse:       devcluster.Duration(100 * time.Millisecond),
		Agents:              agents,
		WorkDir:             t.TempDir(),
		Logger:              slog.New(slog.DiscardHandler),
	}
	if edit != nil {
		edit(&cfg)
	}
	cluster, err := devcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	return &system{t: t, cluster: cluster, etcd: etcd, reg: registry.New(st, time.Now), st: st, agentSync: 200 * time.Millisecond}
}

func (s *system) startDriver() {
	d, err := scheduler.NewDriver(scheduler.DriverConfig{
		Masters:           []string{s.cluster.MasterURL()},
		Registry:          s.reg,
		Store:             s.st,
		TickInterval:      50 * time.Millisecond,
		AgentSyncInterval: s.agentSync,
		AnswerMargin:      200 * time.Millisecond,
		Mesos:             s.mesos,
		Logger:            s.logger,
		Identities:        s.identities,
		BackoffMax:        s.backoffMax,
		Core: scheduler.Config{
			ProcessExecutor: scheduler.ExecutorBinary{URI: "file:///opt/bcs/bcs-process-executor"},
			RefuseSeconds:   0.1,
		},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.driver, s.cancel, s.done = d, cancel, make(chan error, 1)
	go func() { s.done <- d.Run(ctx) }()
	s.t.Cleanup(s.stopDriver)
}

func (s *system) stopDriver() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	if err := <-s.done; err != nil {
		s.t.Errorf("driver: %v", err)
	}
	s.cancel = nil
}

// eventually polls cond until it holds or 15 s pass.
func (s *system) eventually(what string, cond func() (bool, string)) {
	s.t.Helper()
	eventually(s.t, what, cond)
}

func (s *system) groups(name string) []*registry.TaskGroup {
	groups, err := s.reg.TaskGroups(context.Background(), "ns-a", name)
	if err != nil {
		s.t.Fatal(err)
	}
	return groups
}

// running waits until the application has exactly n running instances on
// n distinct agents, and returns them.
func (s *system) running(name string, n int) []*registry.TaskGroup {
	s.t.Helper()
	var groups []*registry.TaskGroup
	s.eventually(fmt.Sprintf("%d running instances of %s", n, name), func() (bool, string) {
		groups = s.groups(name)
		agents := map[string]bool{}
		var states []string
		for _, g := range groups {
			states = append(states, fmt.Sprintf("%d:%s/%s@%s", g.Index, g.Phase, g.State, g.AgentID))
			if g.Phase == string(scheduler.PhaseRunning) {
				agents[g.AgentID] = true
			}
		}
		return len(groups) == n && len(agents) == n, strings.Join(states, " ")
	})
	return groups
}

func (s *system) appState(name string) (registry.AppState, string) {
	app, err := s.reg.GetApp(context.Background(), "ns-a", name)
	if err != nil {
		return "", err.Error()
	}
	return app.State, app.Message
}

func processApp(name string, instances int) *manifest.Process {
	p := manifesttest.Process()
	p.Metadata.Name = name
	p.Spec.Instance = instances
	p.RestartPolicy = manifest.RestartPolicy{Policy: manifest.RestartOnFailure, Interval: 1, Backoff: 1}
	p.Constraint = constrainttest.New().Unique("hostname").Constraint()
	proc := &p.Spec.Template.Spec.Processes[0]
	proc.Ports = []manifest.ProcessPort{{Name: "http_port", Protocol: "HTTP"}}
	proc.StartCmd = "./start.sh --port ${ports.http_port}"
	proc.HealthChecks, proc.ConfigMaps, proc.Secrets = nil, nil, nil
	proc.Resources.Limits = manifest.ResourceList{CPU: "0.5", Memory: "128"}
	return p
}

// End to end through the driver: 3 instances with hostname UNIQUE on 3 agents reach
// RUNNING; a failed task is relaunched after the backoff; scale 3→5 leaves
// the two that cannot fit pending with the rejections shown, and back to
// 3 Running at once, without them; scale to 2
// kills the highest instances; delete leaves nothing running.
func TestDriverRunsApplicationsOnDevCluster(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 3)); err != nil {
		t.Fatal(err)
	}
	groups := s.running("game", 3)
	// The agents the offers came from are recorded for GET /v1/agents.
	agents, err := s.reg.ListAgents(ctx)
	if err != nil || len(agents) != 3 || agents[0].Hostname == "" || agents[0].Attributes["idc"] != "dev" {
		t.Errorf("agents = %+v, %v", agents, err)
	}
	s.eventually("state Running", func() (bool, string) {
		st, msg := s.appState("game")
		return st == registry.AppRunning, string(st) + " " + msg
	})

	// A failed task comes back after interval 1s as a new launch.
	victim := groups[1]
	fwID := s.cluster.Frameworks()[0]
	if err := s.cluster.FailTask(fwID, victim.Tasks[0].ID, "boom"); err != nil {
		t.Fatal(err)
	}
	s.eventually("instance 1 relaunched", func() (bool, string) {
		g := s.groups("game")[1]
		return g.Launches == 2 && g.Phase == string(scheduler.PhaseRunning) && g.Restarts == 1,
			fmt.Sprintf("launches=%d phase=%s restarts=%d msg=%q", g.Launches, g.Phase, g.Restarts, g.Message)
	})
	// The record keeps where the failed launch ran: its logs stay
	// readable by its ID.
	if p := s.groups("game")[1].Previous; p == nil || p.ID != victim.ID || p.AgentID != victim.AgentID || len(p.Tasks) != 1 || p.Tasks[0].State != "TASK_FAILED" {
		t.Errorf("previous launch %+v, want %s on %s, its task failed", p, victim.ID, victim.AgentID)
	}

	// 5 instances cannot be unique on 3 agents.
	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 5, false); err != nil {
		t.Fatal(err)
	}
	s.eventually("Abnormal with the rejections", func() (bool, string) {
		st, msg := s.appState("game")
		return st == registry.AppAbnormal && strings.Contains(msg, "0/3 agents fit: hostname UNIQUE 3"), string(st) + " " + msg
	})
	// Back to 3: the instances that fit nowhere are gone, and so is the
	// reason at once, with no placement pass of the application to come.
	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 3, false); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 3*time.Second, "Running again at once after the scale-down to 3", func() (bool, string) {
		st, msg := s.appState("game")
		return st == registry.AppRunning && msg == "" && len(s.groups("game")) == 3, string(st) + " " + msg
	})

	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 2, false); err != nil {
		t.Fatal(err)
	}
	kept := s.running("game", 2)
	for _, g := range kept {
		if g.Index > 1 {
			t.Errorf("instance %d kept; scale-down removes the highest IDs", g.Index)
		}
	}
	state, err := s.cluster.TaskState(fwID, groups[2].Tasks[0].ID)
	if err != nil || state != mesos.TASK_KILLED {
		t.Errorf("instance 2's task is %v (%v), want TASK_KILLED", state, err)
	}

	if _, err := s.reg.DeleteApp(ctx, "ns-a", "game", false); err != nil {
		t.Fatal(err)
	}
	s.eventually("application removed", func() (bool, string) {
		_, err := s.reg.GetApp(ctx, "ns-a", "game")
		return err != nil && len(s.groups("game")) == 0, fmt.Sprint(err)
	})
	for _, g := range kept {
		if st, _ := s.cluster.TaskState(fwID, g.Tasks[0].ID); st != mesos.TASK_KILLED {
			t.Errorf("task %s is %v after delete", g.Tasks[0].ID, st)
		}
	}
}

// A restarted scheduler fails over to the same framework and
// keeps the running instances: no relaunch, no duplicate.
func TestDriverFailoverKeepsInstances(t *testing.T) {
	s := startSystem(t)
	if _, err := s.reg.CreateApp(context.Background(), processApp("game", 3)); err != nil {
		t.Fatal(err)
	}
	before := s.running("game", 3)
	s.stopDriver()
	s.startDriver()
	time.Sleep(time.Second) // let it subscribe, reconcile and see offers
	after := s.running("game", 3)
	for i := range before {
		if before[i].ID != after[i].ID || after[i].Launches != 1 {
			t.Errorf("instance %d: %s (launch %d) became %s (launch %d)", i, before[i].ID, before[i].Launches, after[i].ID, after[i].Launches)
		}
	}
	if n := len(s.cluster.Frameworks()); n != 1 {
		t.Errorf("%d frameworks registered, want the same one", n)
	}
}

// REMOTE_TCP checks run in the scheduler against the instance's
// host; the verdict shows on the instance, and after consecutiveFailures
// the instance is killed and relaunched by its restart policy.
func TestDriverRemoteHealthChecks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(ready.Close)
	httpPort := ready.Listener.Addr().(*net.TCPAddr).Port
	s := startSystem(t, devcluster.AgentSpec{Hostname: "localhost"})
	p := processApp("checked", 1)
	p.Constraint = nil
	p.Spec.Template.Spec.Processes[0].HealthChecks = []manifest.HealthCheck{{
		Type: manifest.CheckRemoteTCP, IntervalSeconds: 2, TimeoutSeconds: 1, ConsecutiveFailures: 2,
		TCP: &manifest.TCPCheck{Port: port},
	}, {
		Type: manifest.CheckRemoteHTTP, IntervalSeconds: 2, TimeoutSeconds: 1, ConsecutiveFailures: 2,
		HTTP: &manifest.HTTPCheck{Scheme: "http", Port: httpPort, Path: "/ready"},
	}}
	if errs := p.Validate(nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, err := s.reg.CreateApp(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// Each check by name with its own verdict, so that the one failing
	// is known; healthy once both pass.
	// A process is probed on its agent's address, which each result names.
	want := []registry.RemoteCheckResult{{Name: fmt.Sprintf("REMOTE_TCP %d", port), Address: fmt.Sprintf("localhost:%d", port), Healthy: true},
		{Name: fmt.Sprintf("REMOTE_HTTP %d /ready", httpPort), Address: fmt.Sprintf("localhost:%d", httpPort), Healthy: true}}
	s.eventually("both remote checks healthy", func() (bool, string) {
		g := s.groups("checked")
		if len(g) != 1 {
			return false, "no instance"
		}
		return g[0].RemoteHealthy != nil && *g[0].RemoteHealthy && slices.Equal(g[0].RemoteChecks, want),
			fmt.Sprintf("%+v %q %+v", g[0].RemoteHealthy, g[0].RemoteMessage, g[0].RemoteChecks)
	})
	ln.Close()
	s.eventually("the TCP check failing, named", func() (bool, string) {
		g := s.groups("checked")[0]
		return g.RemoteHealthy != nil && !*g.RemoteHealthy && strings.HasPrefix(g.RemoteMessage, want[0].Name+": "),
			fmt.Sprintf("%+v %q", g.RemoteHealthy, g.RemoteMessage)
	})
	s.eventually("killed and relaunched after 2 failures", func() (bool, string) {
		g := s.groups("checked")[0]
		return g.Launches >= 2 && g.Restarts >= 1, fmt.Sprintf("launches=%d phase=%s msg=%q", g.Launches, g.Phase, g.Message)
	})
}

// The driver feeds configmaps to the core from the store's
// watch; an instance whose configmap is missing waits (Abnormal, saying
// for what) and runs once the configmap is created — no read of the
// store in the core, no instance failed for good.
func TestDriverWaitsForAMissingConfigMap(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	p := processApp("cfg", 1)
	p.Spec.Template.Spec.Processes[0].ConfigMaps = []manifest.ConfigMapRef{{Name: "game-config",
		Items: []manifest.ConfigMapItem{{DataKey: "level", Type: manifest.ItemEnv, KeyOrPath: "LEVEL"}}}}
	if _, err := s.reg.CreateApp(ctx, p); err != nil {
		t.Fatal(err)
	}
	s.eventually("Abnormal, waiting for the configmap", func() (bool, string) {
		st, msg := s.appState("cfg")
		return st == registry.AppAbnormal && strings.Contains(msg, "waiting for configmap ns-a/game-config"), string(st) + " " + msg
	})
	cm := &manifest.ConfigMap{APIVersion: "v4", KindName: "configmap", Metadata: manifest.ObjectMeta{Name: "game-config", Namespace: "ns-a"},
		Datas: map[string]manifest.ConfigMapData{"level": {Type: manifest.ConfigDataFile, Content: "OQ=="}}}
	if _, err := s.reg.PutObject(ctx, cm, -1); err != nil {
		t.Fatal(err)
	}
	s.running("cfg", 1)
}

// The driver stores each notice with its instance's record —
// an exit (a task failing on its own) and a missing instance (its agent
// removed) — once, also across a restart of the driver; a scale-down's
// kill tells nothing.
func TestDriverStoresNotices(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 3)); err != nil {
		t.Fatal(err)
	}
	groups := s.running("game", 3)
	fwID := s.cluster.Frameworks()[0]
	if err := s.cluster.FailTask(fwID, groups[0].Tasks[0].ID, "boom"); err != nil {
		t.Fatal(err)
	}
	if err := s.cluster.RemoveAgent(groups[1].AgentID); err != nil {
		t.Fatal(err)
	}
	want := []string{"exit " + groups[0].ID, "missing " + groups[1].ID}
	notices := func() []string {
		stored, err := s.reg.ListNotifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range stored {
			got = append(got, string(n.Type)+" "+n.TaskGroupID)
		}
		slices.Sort(got)
		return got
	}
	s.eventually("an exit and a missing notice", func() (bool, string) {
		return slices.Equal(notices(), want), fmt.Sprint(notices())
	})
	stored, _ := s.reg.ListNotifications(ctx)
	for _, n := range stored {
		g := s.groups("game")[n.Instance]
		if g.Launches < 2 && n.TaskGroupID == g.ID && g.Phase == string(scheduler.PhaseRunning) {
			t.Errorf("notice %s stored, but its instance still runs that launch: %+v", n.ID, g)
		}
		if n.Type == registry.NoticeExit && !strings.Contains(n.Message, "TASK_FAILED") {
			t.Errorf("exit notice %q does not say how", n.Message)
		}
	}

	if _, err := s.reg.ScaleApp(ctx, "ns-a", "game", 1, false); err != nil {
		t.Fatal(err)
	}
	s.running("game", 1)
	s.stopDriver()
	s.startDriver()
	time.Sleep(time.Second) // let it subscribe, reconcile and see the updates again
	if got := notices(); !slices.Equal(got, want) {
		t.Errorf("notices after a restart and a scale-down: %v, want %v", got, want)
	}
}

// operatorCall POSTs a JSON call to the dev cluster's operator API.
func (s *system) operatorCall(body string) {
	s.t.Helper()
	resp, err := http.Post(s.cluster.MasterURL()+"/api/v1", "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if msg, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		s.t.Fatalf("operator call %s: %s %s", body, resp.Status, msg)
	}
}

func (s *system) agentRecord(id string) *registry.Agent {
	agents, err := s.reg.ListAgents(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// Agents of an old master are dropped once the new master does not know
// them, and the Mesos maintenance primitives (inverse offers,
// DRAIN_AGENT) are honoured — against the dev cluster's master, which
// implements them as Mesos 1.12 does. A maintenance window moves the
// instance off its agent (place before kill) and the inverse offer is
// accepted once it is gone; the master's DRAIN_AGENT evicts an instance,
// which is placed again without a restart counted or an exit notice; the
// agent in the window takes nothing until the schedule is cleared.
func TestDriverHonoursMesosMaintenanceAndDrain(t *testing.T) {
	s := startSystem(t)
	// The master's agents are read when the driver subscribes and when an
	// event hints that one changed, not by the clock.
	s.stopDriver()
	s.agentSync = time.Hour
	ctx := context.Background()
	if err := s.reg.RecordAgent(ctx, "agent-of-an-old-master", "old-host", "", nil); err != nil {
		t.Fatal(err)
	}
	s.startDriver()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 2)); err != nil {
		t.Fatal(err)
	}
	groups := s.running("game", 2)
	s.eventually("agents synced with the master", func() (bool, string) {
		agents, _ := s.reg.ListAgents(ctx)
		var got []string
		ok := len(agents) == 3
		for _, a := range agents {
			got = append(got, fmt.Sprintf("%s:%+v", a.ID, a.Master))
			ok = ok && a.Master != nil && a.Master.Active && a.Master.Total.CPUs > 0 && a.Master.Total.Ports > 0
		}
		return ok, strings.Join(got, " ")
	})
	free := slices.DeleteFunc(s.cluster.Agents(), func(id string) bool { return id == groups[0].AgentID || id == groups[1].AgentID })[0]

	// Maintenance for instance 0's agent: it moves to the free agent.
	maintained := s.agentRecord(groups[0].AgentID)
	start := time.Now().Add(time.Hour).UnixNano()
	schedule := func(hosts ...string) string {
		var windows []string
		for _, h := range hosts {
			windows = append(windows, fmt.Sprintf(`{"machine_ids":[{"hostname":%q,"ip":"127.0.0.1"}],"unavailability":{"start":{"nanoseconds":%d},"duration":{"nanoseconds":%d}}}`,
				h, start, int64(time.Hour)))
		}
		return `{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{"windows":[` + strings.Join(windows, ",") + `]}}}`
	}
	s.operatorCall(schedule(maintained.Hostname))
	s.eventually("instance 0 moved off the agent in maintenance, the inverse offer accepted", func() (bool, string) {
		g := s.groups("game")[0]
		rec := s.agentRecord(maintained.ID)
		return g.AgentID == free && g.Phase == string(scheduler.PhaseRunning) && g.Move == nil && rec.Maintenance != nil && rec.Maintenance.Answer == "accepted",
			fmt.Sprintf("instance 0 %s on %s move=%+v; maintenance %+v", g.Phase, g.AgentID, g.Move, rec.Maintenance)
	})
	if p := s.groups("game")[0].Previous; p == nil || p.ID != groups[0].ID || p.AgentID != maintained.ID {
		t.Errorf("previous launch %+v, want the moved one, %s on %s", p, groups[0].ID, maintained.ID)
	}
	client, err := mesosoperator.New(s.cluster.MasterURL())
	if err != nil {
		t.Fatal(err)
	}
	status, err := client.GetMaintenanceStatus(ctx)
	if err != nil || len(status.Draining) != 1 || len(status.Draining[0].Answers) != 1 || status.Draining[0].Answers[0].Answer != "ACCEPT" {
		t.Errorf("maintenance status %+v, %v: want our ACCEPT for the machine", status, err)
	}

	// The master drains instance 1's agent: the instance is evicted and,
	// with one agent in maintenance and the other taken (UNIQUE), waits.
	s.operatorCall(fmt.Sprintf(`{"type":"DRAIN_AGENT","drain_agent":{"agent_id":{"value":%q}}}`, groups[1].AgentID))
	s.eventually("instance 1 evicted, pending, no restart counted; the agent DRAINED", func() (bool, string) {
		g := s.groups("game")[1]
		rec := s.agentRecord(groups[1].AgentID)
		return g.Phase == string(scheduler.PhasePending) && g.Restarts == 0 && strings.Contains(g.Message, "REASON_AGENT_DRAINING") &&
				rec.Master != nil && rec.Master.Drain == "DRAINED" && !rec.Master.Active,
			fmt.Sprintf("instance 1 %s restarts=%d %q; master view %+v", g.Phase, g.Restarts, g.Message, rec.Master)
	})
	if st, msg := s.appState("game"); !strings.Contains(msg, "maintenance 1") {
		t.Errorf("app %s %q: want the agent in maintenance named among the rejections", st, msg)
	}

	// The schedule cleared: the agent takes the evicted instance.
	s.operatorCall(`{"type":"UPDATE_MAINTENANCE_SCHEDULE","update_maintenance_schedule":{"schedule":{}}}`)
	s.eventually("instance 1 placed on the agent out of maintenance", func() (bool, string) {
		g := s.groups("game")[1]
		return g.Phase == string(scheduler.PhaseRunning) && g.AgentID == maintained.ID && g.Restarts == 0,
			fmt.Sprintf("instance 1 %s on %s restarts=%d %q", g.Phase, g.AgentID, g.Restarts, g.Message)
	})
	if rec := s.agentRecord(maintained.ID); rec.Maintenance != nil {
		t.Errorf("agent %s still shows maintenance %+v", maintained.ID, rec.Maintenance)
	}
	if s.agentRecord("agent-of-an-old-master") != nil {
		t.Error("the record of an agent the master does not know is kept")
	}
	if notes, err := s.reg.ListNotifications(ctx); err != nil || len(notes) != 0 {
		t.Errorf("notifications %+v, %v: a move and an eviction are no exit", notes, err)
	}
}

// executorGot waits until the simulated executor of task group g has got
// n framework messages and returns the nth.
func (s *system) executorGot(g *registry.TaskGroup, n int) proto.Message {
	s.t.Helper()
	var got [][]byte
	s.eventually(fmt.Sprintf("message %d at the executor", n), func() (bool, string) {
		var err error
		got, err = s.cluster.ExecutorMessages(s.cluster.Frameworks()[0], g.AgentID, g.ID)
		return len(got) >= n, fmt.Sprintf("%d messages, %v", len(got), err)
	})
	msg, err := proto.DecodeMessage(got[n-1])
	if err != nil {
		s.t.Fatal(err)
	}
	return *msg
}

// answer sends res as the executor of task group g.
func (s *system) answer(g *registry.TaskGroup, res proto.MessageResult) {
	s.t.Helper()
	data, err := res.Encode()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.cluster.SendExecutorMessage(s.cluster.Frameworks()[0], g.AgentID, g.ID, data); err != nil {
		s.t.Fatal(err)
	}
}

// instanceMessage is the message shown on instance 0 of an application.
func (s *system) instanceMessage(name string) string {
	groups := s.groups(name)
	if len(groups) == 0 {
		return "no instance"
	}
	return groups[0].Message
}

// Executor messages whose answer a caller waits for. The
// driver sends MESSAGE to the instance's executor (the task group ID) on
// its agent and hands the executor's MessageResult with the message's ID
// to the caller, not to the core; a result nobody waits for (one the core
// sent, or one that came too late) goes to the core, which shows it on
// the instance as before; an answer that never comes times out after the
// message's timeout and the margin, and leaves no waiter behind.
func TestDriverExecutorMessages(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 1)); err != nil {
		t.Fatal(err)
	}
	g := s.running("game", 1)[0]
	task := g.Tasks[0]

	type outcome struct {
		res *proto.MessageResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.driver.Message(ctx, g.ID, task.Name, proto.Message{Type: proto.MessageExec, Command: []string{"echo", "hi"}, Timeout: 5 * time.Second})
		done <- outcome{res, err}
	}()
	exec := s.executorGot(g, 1)
	if exec.Type != proto.MessageExec || exec.TaskID != task.ID || !slices.Equal(exec.Command, []string{"echo", "hi"}) || exec.Timeout != 5*time.Second {
		t.Errorf("the executor got %+v", exec)
	}
	// First a result nobody waits for, then the answer.
	s.answer(g, proto.MessageResult{ID: "reload-1", Type: proto.MessageReload, TaskID: task.ID, OK: true})
	s.answer(g, proto.MessageResult{ID: exec.ID, Type: proto.MessageExec, TaskID: task.ID, OK: true, Output: "hi\n"})
	select {
	case o := <-done:
		if o.err != nil || o.res.ID != exec.ID || o.res.Output != "hi\n" || !o.res.OK {
			t.Errorf("Message = %+v, %v", o.res, o.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer handed to the caller")
	}
	// The answer went to its caller, the other result to the core: the
	// instance shows the first (once stored: steps are stored after the
	// loop moved on).
	s.eventually("the unclaimed reload result shown", func() (bool, string) {
		got := s.instanceMessage("game")
		return got == "reload ok", got
	})

	start := time.Now()
	_, err := s.driver.Message(ctx, g.ID, "", proto.Message{Type: proto.MessageSignal, Signal: 1, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, errdefs.ErrTimeout) || time.Since(start) < 500*time.Millisecond {
		t.Errorf("unanswered Message = %v after %s, want ErrTimeout after the timeout and the margin", err, time.Since(start))
	}
	if n := s.driver.Waiting(); n != 0 {
		t.Errorf("%d callers still waiting after the timeout", n)
	}
	late := s.executorGot(g, 2)
	s.answer(g, proto.MessageResult{ID: late.ID, Type: proto.MessageSignal, TaskID: task.ID, Error: "too late"})
	s.eventually("the late answer on the instance", func() (bool, string) {
		got := s.instanceMessage("game")
		return got == "signal failed: too late", got
	})

	// Refusals, before anything is sent.
	p := processApp("never", 1)
	p.Constraint, p.RestartPolicy = nil, manifest.RestartPolicy{Policy: manifest.RestartNever}
	if _, err := s.reg.CreateApp(ctx, p); err != nil {
		t.Fatal(err)
	}
	failed := s.running("never", 1)[0]
	if err := s.cluster.FailTask(s.cluster.Frameworks()[0], failed.Tasks[0].ID, "boom"); err != nil {
		t.Fatal(err)
	}
	s.eventually("the instance failed", func() (bool, string) {
		g := s.groups("never")[0]
		return g.Phase == string(scheduler.PhaseFailed), g.Phase
	})
	for _, c := range []struct {
		taskGroupID, task string
		want              error
	}{
		{"ns-a_nothere_0_1", "", errdefs.ErrNotFound},
		{g.ID, "nothere", errdefs.ErrNotFound},
		{failed.ID, "", errdefs.ErrConflict},
	} {
		_, err := s.driver.Message(ctx, c.taskGroupID, c.task, proto.Message{Type: proto.MessageExec, Command: []string{"true"}, Timeout: time.Second})
		if !errors.Is(err, c.want) {
			t.Errorf("Message to %s %q = %v, want %v", c.taskGroupID, c.task, err, c.want)
		}
	}
	if got, _ := s.cluster.ExecutorMessages(s.cluster.Frameworks()[0], g.AgentID, g.ID); len(got) != 2 {
		t.Errorf("the executor got %d messages, want only the exec and the signal", len(got))
	}
	if n := s.driver.Waiting(); n != 0 {
		t.Errorf("%d callers still waiting", n)
	}
}

// The driver answers a plan from the loop, between two steps,
// on the cluster the core knows — every agent, offer in hand or not — and
// the plan changes nothing; a stopped driver answers unavailable.
func TestDriverPlansWithoutChangingAnything(t *testing.T) {
	s := startSystem(t)
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 2)); err != nil {
		t.Fatal(err)
	}
	running := s.running("game", 2)
	taken := map[string]bool{running[0].AgentID: true, running[1].AgentID: true}

	// Scaled to 4 with hostname UNIQUE on 3 agents: the two running are
	// kept, one is placed on the third agent, one fits none.
	p, err := s.driver.Plan(ctx, processApp("game", 4))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, inst := range p.Instances {
		got = append(got, fmt.Sprintf("%d:%s:%v:%v", inst.Index, inst.Action, taken[inst.Agent], inst.Pending != nil))
	}
	if want := []string{"0:keep:true:false", "1:keep:true:false", "2:place:false:false", "3:place:false:true"}; p.Action != "update" ||
		p.CurrentVersion != 1 || !slices.Equal(got, want) || p.Instances[2].Agent == "" {
		t.Fatalf("plan %s current=%d %q (index:action:on a taken agent:pending), want update current=1 %q", p.Action, p.CurrentVersion, got, want)
	}
	if pending := p.Instances[3].Pending; pending.Fit != 0 || pending.Agents != 3 || len(pending.Reasons) != 1 ||
		pending.Reasons[0] != (registry.PendingReason{Reason: "hostname UNIQUE", Count: 3}) {
		t.Errorf("pending %+v, want 0/3 agents fit: hostname UNIQUE 3", pending)
	}
	// A new application: placed on the three agents.
	p, err = s.driver.Plan(ctx, processApp("other", 3))
	if err != nil || p.Action != "create" || p.Summary.Place != 3 {
		t.Fatalf("plan of a create %+v, %v: want 3 placed", p, err)
	}

	// Nothing changed: the version, the instances, no new application.
	if app, err := s.reg.GetApp(ctx, "ns-a", "game"); err != nil || app.Version != 1 || app.Instances != 2 {
		t.Errorf("game after planning: %+v, %v", app, err)
	}
	if _, err := s.reg.GetApp(ctx, "ns-a", "other"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("other after planning its create: %v, want not found", err)
	}
	if groups := s.groups("game"); len(groups) != 2 {
		t.Errorf("game has %d instances after planning, want 2", len(groups))
	}

	driver := s.driver
	s.stopDriver()
	if _, err := driver.Plan(ctx, processApp("game", 4)); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("plan of a stopped driver: %v, want unavailable", err)
	}
}

// A driver busy for longer than three heartbeat intervals has
// not lost the master. Events waiting to be handed to it do not end the
// subscription, which made the master resend every unacknowledged status
// update: the silence counted is the master's, not the driver's.
func TestBusyDriverKeepsItsSubscription(t *testing.T) {
	s := newSystemWith(t, func(cfg *devcluster.Config) {
		cfg.HeartbeatInterval = devcluster.Duration(100 * time.Millisecond)
		cfg.SimulatedStartDelay = devcluster.Duration(300 * time.Millisecond)
	})
	var logs func() string
	s.logger, logs = testlog.Recorded(t)
	s.startDriver()
	ctx := context.Background()
	// More instances than the driver's queue of events holds (256), so
	// the subscription waits to hand their updates over.
	const instances = 300
	app := processApp("game", instances)
	app.Constraint = nil
	app.Spec.Template.Spec.Processes[0].Resources.Limits = manifest.ResourceList{CPU: "0.01", Memory: "1"}
	if _, err := s.reg.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	s.eventually("the launches sent", func() (bool, string) {
		launched := 0
		for _, g := range s.groups("game") {
			if g.Phase == string(scheduler.PhaseLaunched) {
				launched++
			}
		}
		return launched == instances, fmt.Sprint(launched)
	})
	// Their status updates come while the loop is busy for ten times the
	// 300 ms the heartbeats allow.
	if err := s.driver.Busy(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	s.eventually("every instance running", func() (bool, string) {
		running := 0
		for _, g := range s.groups("game") {
			if g.Phase == string(scheduler.PhaseRunning) {
				running++
			}
		}
		return running == instances, fmt.Sprint(running)
	})
	if strings.Contains(logs(), "mesos subscription ended") {
		t.Errorf("the subscription ended while the driver was busy:\n%s", logs())
	}
	if st := s.cluster.Stats(); st.StatusUpdatesResent != 0 {
		t.Errorf("%d status updates resent", st.StatusUpdatesResent)
	}
}

// rangeIdentities gives namespaces uids of a range that a test may widen.
type rangeIdentities struct {
	reg  *registry.Registry
	mu   sync.Mutex
	uids identity.Range
}

func (r *rangeIdentities) Identity(ctx context.Context, namespace string) (*proto.Identity, error) {
	r.mu.Lock()
	uids := r.uids
	r.mu.Unlock()
	uid, err := r.reg.EnsureNamespaceUID(ctx, namespace, uids)
	if err != nil {
		return nil, err
	}
	return &proto.Identity{UID: uid, GID: uid, Range: uids.String()}, nil
}

// The driver gets each namespace's identity before the core
// sees its applications, recorded in etcd once; a namespace that cannot
// have one (the range is full) waits, saying why, and runs once the
// driver, asking again, gets one.
func TestDriverGivesNamespacesIdentities(t *testing.T) {
	s := newSystem(t)
	ids := &rangeIdentities{reg: s.reg, uids: identity.Range{First: 20000, Last: 20000}}
	s.identities, s.backoffMax = ids, 200*time.Millisecond
	s.startDriver()
	ctx := context.Background()
	if _, err := s.reg.CreateApp(ctx, processApp("game", 1)); err != nil {
		t.Fatal(err)
	}
	s.running("game", 1)
	other := processApp("game", 1)
	other.Metadata.Namespace = "ns-b"
	if _, err := s.reg.CreateApp(ctx, other); err != nil {
		t.Fatal(err)
	}
	s.eventually("ns-b waits for its uid", func() (bool, string) {
		app, err := s.reg.GetApp(ctx, "ns-b", "game")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(app.Message, `waiting for the uid of namespace "ns-b" on the agents: namespace "ns-b" gets no uid: every one of the 1 uids of --namespace-uids 20000-20000 is another namespace's`), app.Message
	})
	ids.mu.Lock()
	ids.uids.Last = 20001
	ids.mu.Unlock()
	s.eventually("ns-b runs", func() (bool, string) {
		groups, err := s.reg.TaskGroups(ctx, "ns-b", "game")
		if err != nil || len(groups) != 1 {
			return false, fmt.Sprint(groups, err)
		}
		return groups[0].Phase == string(scheduler.PhaseRunning), groups[0].Phase + " " + groups[0].Message
	})
	for ns, want := range map[string]uint32{"ns-a": 20000, "ns-b": 20001} {
		if uid, _, err := s.reg.NamespaceUID(ctx, ns); err != nil || uid != want {
			t.Errorf("%s's recorded uid %d %v, want %d", ns, uid, err, want)
		}
	}
}
