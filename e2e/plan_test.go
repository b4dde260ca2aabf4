package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// planView is what the tests read of a plan (POST /v1/plan, ?dryRun=true).
type planView struct {
	Action         string `json:"action"`
	CurrentVersion int    `json:"currentVersion"`
	Instances      []struct {
		Index      int          `json:"index"`
		Action     string       `json:"action"`
		Agent      string       `json:"agent"`
		Hostname   string       `json:"hostname"`
		UpdateMode string       `json:"updateMode"`
		Pending    *pendingView `json:"pending"`
	} `json:"instances"`
	Summary map[string]int `json:"summary"`
}

type pendingView struct {
	Fit     int `json:"fit"`
	Agents  int `json:"agents"`
	Reasons []struct {
		Reason string `json:"reason"`
		Count  int    `json:"count"`
	} `json:"reasons"`
	LastEvaluated time.Time `json:"lastEvaluated"`
}

// verdict is a pending verdict without its time, to compare.
func (p *pendingView) verdict() string {
	if p == nil {
		return "none"
	}
	s := fmt.Sprintf("%d/%d", p.Fit, p.Agents)
	for _, r := range p.Reasons {
		s += fmt.Sprintf(", %s %d", r.Reason, r.Count)
	}
	return s
}

// describe is a plan without the times of its verdicts, to compare:
// "INDEX:ACTION:MODE:HOST:VERDICT" per instance.
func (p planView) describe() []string {
	out := []string{fmt.Sprintf("%s current=%d %v", p.Action, p.CurrentVersion, p.Summary)}
	for _, inst := range p.Instances {
		out = append(out, fmt.Sprintf("%d:%s:%s:%s:%s", inst.Index, inst.Action, inst.UpdateMode, inst.Hostname, inst.Pending.verdict()))
	}
	return out
}

// placements are a plan's hosts, sorted, and its pending verdicts.
func (p planView) placements() (hosts []string, pending []string) {
	for _, inst := range p.Instances {
		if inst.Pending != nil {
			pending = append(pending, inst.Pending.verdict())
		} else if inst.Hostname != "" {
			hosts = append(hosts, inst.Hostname)
		}
	}
	slices.Sort(hosts)
	return hosts, pending
}

// etcdProbe reads the etcd bcs-scheduler stores in: its revision, and
// which keys were written between two revisions.
type etcdProbe struct {
	t         *testing.T
	st        *store.Store
	endpoints []string
}

func startEtcd(t *testing.T) (*etcdProbe, string) {
	t.Helper()
	st, etcd := storetest.NewStore(t)
	return &etcdProbe{t: t, st: st, endpoints: etcd.Endpoints()}, strings.Join(etcd.Endpoints(), ",")
}

func (p *etcdProbe) revision() int64 {
	p.t.Helper()
	rev, err := p.st.Revision(context.Background())
	if err != nil {
		p.t.Fatal(err)
	}
	return rev
}

// written lists the keys written after revision from, up to revision to.
func (p *etcdProbe) written(from, to int64) []string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, err := p.st.WatchKeys(ctx, "", from+1, func(key string) bool { return !strings.HasPrefix(key, "secrets/") })
	if err != nil {
		p.t.Fatal(err)
	}
	var keys []string
	for ev := range events {
		if ev.Err != nil {
			p.t.Fatalf("watch from revision %d: %v", from+1, ev.Err)
		}
		if ev.Entry.Revision > to {
			break
		}
		keys = append(keys, ev.Entry.Key)
		if ev.Entry.Revision == to {
			break
		}
	}
	return keys
}

// storesNothing runs requests and shows that they wrote nothing: the etcd
// revision is the same before and after. The scheduler's own records of
// agents (when they last offered) may be written meanwhile: a window
// where one was is tried again, one where anything else was fails.
func (p *etcdProbe) storesNothing(requests func()) {
	p.t.Helper()
	for range 5 {
		before := p.revision()
		requests()
		after := p.revision()
		if after == before {
			return
		}
		for _, key := range p.written(before, after) {
			if !strings.HasPrefix(key, "agents/") {
				p.t.Fatalf("etcd revision %d → %d: %s was written", before, after, key)
			}
		}
	}
	p.t.Fatal("agent records were written in every window: no quiet window to compare revisions")
}

// Plan and dry-run a create and an update against the real
// bcs-scheduler and dev cluster — nothing stored (the etcd revision does
// not move) — then do them for real: the running instances land where the
// plan placed them, and the one that fits nowhere waits with the reasons
// the plan gave, stored once (stable across offer rounds).
func TestPlanAndDryRunAgreeWithTheRealThing(t *testing.T) {
	etcd, endpoints := startEtcd(t)
	s := startSystem(t, "--etcd-endpoints", endpoints)
	// UNIQUE hostname on racks r1 and r2 (agent-1, agent-2): instance 2
	// fits nowhere.
	m := s.manifest("process.json", func(m map[string]any) {
		m["constraint"] = map[string]any{"intersectionItem": []any{
			map[string]any{"unionData": []any{map[string]any{"name": "hostname", "operate": "UNIQUE"}}},
			map[string]any{"unionData": []any{map[string]any{"name": "rack", "operate": "CLUSTER", "type": 4,
				"set": map[string]any{"item": []string{"r1", "r2"}}}}},
		}}
	})
	wantHosts, wantPending := []string{"agent-1", "agent-2"}, []string{"0/3, hostname UNIQUE 2, rack CLUSTER 1"}
	plan := func(method, path string, body []byte) planView {
		t.Helper()
		code, out := s.call(method, path, body)
		if code != 200 {
			t.Fatalf("%s %s = %d: %s", method, path, code, out)
		}
		var p planView
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
		return p
	}
	// The scheduler knows the agents once each offered.
	s.eventually("a plan placing on the two agents of racks r1 and r2", func() (bool, string) {
		hosts, pending := plan("POST", "/v1/plan", m).placements()
		return reflect.DeepEqual(hosts, wantHosts) && reflect.DeepEqual(pending, wantPending), fmt.Sprint(hosts, pending)
	})

	var planned, dryRun planView
	etcd.storesNothing(func() {
		planned = plan("POST", "/v1/plan", m)
		dryRun = plan("POST", "/v1/apps?dryRun=true", m)
	})
	if planned.Action != "create" || !reflect.DeepEqual(planned.Summary, map[string]int{"place": 2, "keep": 0, "update": 0, "recreate": 0, "kill": 0, "pending": 1}) {
		t.Errorf("plan %s %v, want a create placing 2, 1 pending", planned.Action, planned.Summary)
	}
	if !slices.Equal(dryRun.describe(), planned.describe()) {
		t.Errorf("dry run %q differs from the plan %q", dryRun.describe(), planned.describe())
	}
	if _, code := s.app("demo", "gamesvr"); code != 404 {
		t.Fatalf("after the plan and the dry run GET = %d, want 404", code)
	}

	// The real create: where the plan said, and the same reasons.
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var waiting *pendingView
	s.eventually("two instances running where planned, the third pending with the planned reasons", func() (bool, string) {
		v := s.gamesvr()
		var hosts, pending []string
		waiting = nil
		for _, inst := range v.Status.Instances {
			switch {
			case inst.State == "TASK_RUNNING":
				hosts = append(hosts, inst.Host)
			case inst.Pending != nil:
				pending, waiting = append(pending, inst.Pending.verdict()), inst.Pending
			}
		}
		slices.Sort(hosts)
		return reflect.DeepEqual(hosts, wantHosts) && reflect.DeepEqual(pending, wantPending) &&
				v.Status.State == "Abnormal" && v.Status.Message == "0/3 agents fit: hostname UNIQUE 2, rack CLUSTER 1",
			fmt.Sprintf("%s %q running on %v, pending %v", v.Status.State, v.Status.Message, hosts, pending)
	})
	// Offer rounds go on (an instance waits); the same verdict is not
	// written again.
	time.Sleep(3 * time.Second)
	for _, inst := range s.gamesvr().Status.Instances {
		if inst.Pending != nil && !inst.Pending.LastEvaluated.Equal(waiting.LastEvaluated) {
			t.Errorf("the pending verdict %s, evaluated at %s, was stored again at %s", inst.Pending.verdict(), waiting.LastEvaluated, inst.Pending.LastEvaluated)
		}
	}

	// An update (a new BUILD, 2 instances): a rolling update recreates
	// the two running instances where they fit (their racks), and the
	// third, which waits, goes (scale-down).
	var mm map[string]any
	_ = json.Unmarshal(m, &mm)
	mm["spec"].(map[string]any)["instance"] = 2
	proc := mm["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
	proc["env"] = append(proc["env"].([]any), map[string]any{"name": "BUILD", "value": "2"})
	updated, _ := json.Marshal(mm)
	etcd.storesNothing(func() {
		planned = plan("POST", "/v1/plan", updated)
		dryRun = plan("PUT", "/v1/apps/demo/gamesvr?dryRun=true", updated)
	})
	var actions []string
	for _, inst := range planned.Instances {
		actions = append(actions, fmt.Sprintf("%d:%s:%s", inst.Index, inst.Action, inst.UpdateMode))
	}
	if planned.Action != "update" || planned.CurrentVersion != 1 || !slices.Equal(actions, []string{"0:recreate:Replace", "1:recreate:Replace", "2:kill:"}) {
		t.Errorf("update plan %s current=%d %q, want update current=1 recreating 0 and 1, killing 2", planned.Action, planned.CurrentVersion, actions)
	}
	if hosts, pending := planned.placements(); !reflect.DeepEqual(hosts, wantHosts) || len(pending) != 0 {
		t.Errorf("update plan places on %v, pending %v; want %v, none", hosts, pending, wantHosts)
	}
	if !slices.Equal(dryRun.describe(), planned.describe()) {
		t.Errorf("dry-run update %q differs from the plan %q", dryRun.describe(), planned.describe())
	}
	if v, _ := s.app("demo", "gamesvr"); v.Version != 1 {
		t.Errorf("after the dry-run update: version %d, want 1", v.Version)
	}

	// The real update: both recreated on the planned hosts.
	if code, body := s.call("PUT", "/v1/apps/demo/gamesvr", updated); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	s.eventually("both instances recreated as revision 2 on the planned hosts, the third gone", func() (bool, string) {
		var hosts []string
		instances := s.gamesvr().Status.Instances
		for _, inst := range instances {
			if inst.State == "TASK_RUNNING" && inst.Revision == 2 {
				hosts = append(hosts, inst.Host)
			}
		}
		slices.Sort(hosts)
		return reflect.DeepEqual(hosts, wantHosts) && len(instances) == 2, fmt.Sprintf("%d instances, revision 2 running on %v", len(instances), hosts)
	})
}

// gamesvrView is what the plan test reads of GET /v1/apps/demo/gamesvr.
type gamesvrView struct {
	Status struct {
		State     string `json:"state"`
		Message   string `json:"message"`
		Instances []struct {
			State    string       `json:"state"`
			Host     string       `json:"host"`
			Revision int          `json:"revision"`
			Pending  *pendingView `json:"pending"`
		} `json:"instances"`
	} `json:"status"`
}

func (s *system) gamesvr() gamesvrView {
	s.t.Helper()
	_, body := s.call("GET", "/v1/apps/demo/gamesvr", nil)
	var v gamesvrView
	_ = json.Unmarshal(body, &v)
	return v
}
