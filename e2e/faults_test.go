package e2e_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// The fault suite: each test injects one fault into a running
// system and asserts that no application, instance, rollout step or
// secret is lost or duplicated — counting what the Mesos master runs, not
// only what our API says — and that the API answers within 5 s of it.

// electionTTL is bcs-scheduler's election lease: how long a dead leader
// still holds leadership (schedulerd.Options.ElectionTTL's default).
const electionTTL = 5 * time.Second

// killLeader ends the leading replica with SIGKILL, as a crash would, and
// points s.api at the standby. It returns when the kill happened.
func (s *system) killLeader(leader, standby replica) time.Time {
	s.t.Helper()
	if err := leader.process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	killed := time.Now()
	_, _ = leader.process.Wait()
	s.api = standby.api
	return killed
}

// answersAfter follows the API at s.api after a fault at fault: the first
// successful read (GET /v1/apps) must come within 5 s, and the first
// successful write (a configmap created) within writesWithin. Each replica
// reads etcd itself, so a standby answers reads whatever happened to the
// leader. Writes are the leader's: after a leader's kill -9 the standby
// redirects them (307) to the dead leader until the dead leader's election
// lease runs out, so writesWithin is then the election TTL + 5 s.
func (s *system) answersAfter(fault time.Time, writesWithin time.Duration) {
	s.t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	probe := fmt.Appendf(nil, `{"apiVersion":"v4","kind":"configmap","metadata":{"name":"probe-%d","namespace":"faults"},
		"datas":{"probe":{"type":"file","content":"cHJvYmU="}}}`, fault.UnixNano())
	var read, write time.Duration
	for read == 0 || write == 0 {
		if time.Since(fault) > writesWithin+10*time.Second {
			break
		}
		if read == 0 {
			if code, _, _ := s.attempt(client, s.api, "GET", "/v1/apps", nil); code == http.StatusOK {
				read = time.Since(fault)
			}
		}
		if write == 0 {
			if code, _, _ := s.attempt(client, s.api, "POST", "/v1/configmaps", probe); code == http.StatusCreated {
				write = time.Since(fault)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Logf("after the fault: first read answered in %s, first write taken in %s", read.Round(time.Millisecond), write.Round(time.Millisecond))
	if read == 0 || read > 5*time.Second {
		s.t.Errorf("the first read answered %s after the fault (0: never), want within 5s", read)
	}
	if write == 0 || write > writesWithin {
		s.t.Errorf("the first write was taken %s after the fault (0: never), want within %s", write, writesWithin)
	}
}

// masterTask is one task the Mesos master has for our framework, as GET
// /master/state shows it.
type masterTask struct {
	Executor string `json:"executor_id"` // our executor ID is the task group ID
	Agent    string `json:"slave_id"`
	State    string `json:"state"`
}

// masterState is what the fault tests read of the master's GET
// /master/state: our framework's live and unreachable tasks.
type masterState struct {
	Frameworks []struct {
		Tasks       []masterTask `json:"tasks"`
		Unreachable []masterTask `json:"unreachable_tasks"`
	} `json:"frameworks"`
}

func (s *system) masterState() masterState {
	s.t.Helper()
	code, body := get(s.master + "/master/state")
	var st masterState
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		s.t.Fatalf("GET /master/state: %d %v %.200s", code, err, body)
	}
	return st
}

// masterGroups are the task groups the master runs of the applications
// whose task group IDs start with prefix ("demo_<app>_"; "" for every
// one): the states of each one's live (non-terminal) tasks.
func (s *system) masterGroups(prefix string) map[string][]string {
	s.t.Helper()
	groups := map[string][]string{}
	for _, fw := range s.masterState().Frameworks {
		for _, task := range fw.Tasks {
			if strings.HasPrefix(task.Executor, prefix) && !terminalTaskState(task.State) {
				groups[task.Executor] = append(groups[task.Executor], task.State)
			}
		}
	}
	return groups
}

func terminalTaskState(state string) bool {
	switch state {
	case "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED",
		"TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN":
		return true
	}
	return false
}

// instanceOf is the instance ID in a task group ID
// (<namespace>_<name>_<instance>_<launch>.<incarnation>).
func instanceOf(taskGroupID string) int {
	parts := strings.Split(taskGroupID, "_")
	n, _ := strconv.Atoi(parts[len(parts)-2])
	return n
}

// settled waits until the workload at path (/v1/apps/demo/x,
// /v1/deployments/demo/x) has exactly n instances, IDs 0…n−1, each
// TASK_RUNNING, and the Mesos master runs exactly their task groups, every
// task TASK_RUNNING: none missing, none duplicated (one task group per
// instance ID), no orphan (a task group the registry does not know).
func (s *system) settled(path string, n int) []instanceView {
	s.t.Helper()
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return s.settledOn(path, ids)
}

// settledOn is settled on the instance IDs ids, ascending: a scale-down
// by choice leaves holes.
func (s *system) settledOn(path string, ids []int) []instanceView {
	s.t.Helper()
	prefix := "demo_" + path[strings.LastIndex(path, "/")+1:] + "_"
	var got []instanceView
	s.eventuallyWithin(60*time.Second, fmt.Sprintf("%s settled on instances %v, the same on the master", path, ids), func() (bool, string) {
		_, body := s.call("GET", path, nil)
		var v appView
		_ = json.Unmarshal(body, &v)
		got = v.Status.Instances
		slices.SortFunc(got, func(a, b instanceView) int { return a.ID - b.ID })
		ours := map[string]bool{}
		for i, inst := range got {
			if i >= len(ids) || inst.ID != ids[i] || inst.State != "TASK_RUNNING" {
				return false, fmt.Sprintf("instance %d: %+v", i, inst)
			}
			ours[inst.TaskGroupID] = true
		}
		if len(got) != len(ids) {
			return false, fmt.Sprintf("%d instances", len(got))
		}
		onMaster := s.masterGroups(prefix)
		perInstance := map[int]int{}
		for id, states := range onMaster {
			perInstance[instanceOf(id)]++
			if !ours[id] {
				return false, fmt.Sprintf("the master runs %s %v, which the registry does not know", id, states)
			}
			for _, st := range states {
				if st != "TASK_RUNNING" {
					return false, fmt.Sprintf("the master has %s %v", id, states)
				}
			}
		}
		return len(onMaster) == len(ids) && len(perInstance) == len(ids), fmt.Sprintf("the master runs %d task groups of %d instances", len(onMaster), len(perInstance))
	})
	return got
}

// processApp is the process example named name with n instances, no
// placement constraint and a tenth of a CPU each (fault tests run many),
// edited by edit (the manifest and its process).
func (s *system) processApp(name string, n int, edit func(m, proc map[string]any)) []byte {
	s.t.Helper()
	return s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = name
		m["spec"].(map[string]any)["instance"] = n
		delete(m, "constraint")
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		proc["resources"] = map[string]any{"limits": map[string]any{"cpu": "0.1", "memory": "64"}}
		if edit != nil {
			edit(m, proc)
		}
	})
}

// gameServerEnv is the environment of the game server of an instance
// of the application name, read from /proc.
func (s *system) gameServerEnv(name string, inst instanceView) []string {
	s.t.Helper()
	pid := pidOf(s.t, s.runPath(inst.Host, fmt.Sprintf("demo.%s.%d", name, inst.ID), "gamesvr.pid"))
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		s.t.Fatalf("the environment of %s instance %d (pid %d): %v", name, inst.ID, pid, err)
	}
	return strings.Split(string(environ), "\x00")
}

// gameServersAlive counts the live processes of the pid files of an
// application's game servers on every agent.
func (s *system) gameServersAlive(name string) int {
	files, _ := filepath.Glob(s.runPath("*", "demo."+name+".*", "gamesvr.pid"))
	n := 0
	for _, f := range files {
		if alive(pidOf(s.t, f)) {
			n++
		}
	}
	return n
}

// creation is one object a client creates: where it posts it, and a
// string the stored spec must contain (its mark: a value unique to it).
type creation struct {
	path, name, mark string
	body             []byte
}

// outcome is what the client got for a creation: an HTTP status, or
// uncertain (the connection broke with the request sent: it may or may
// not have been applied).
type outcome struct {
	code int
	err  error // uncertain
	at   time.Time
}

// createClient posts batches of creations, one goroutine a batch, each
// batch in order, to the replica target names. A request refused at
// connect (nothing reached a server) is sent again 100 ms later, to
// whatever target then names; any other transport error leaves the
// creation uncertain and the batch goes on. reached is closed once
// signal creations were acknowledged.
type createClient struct {
	target   atomic.Value // the API URL
	acked    atomic.Int32
	reached  chan struct{}
	done     sync.WaitGroup
	mu       sync.Mutex
	outcomes map[string]outcome // by path and name
}

func (s *system) createConcurrently(api string, batches [][]creation, signal int) *createClient {
	c := &createClient{outcomes: map[string]outcome{}, reached: make(chan struct{})}
	c.target.Store(api)
	client := &http.Client{Timeout: 5 * time.Second}
	for _, batch := range batches {
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			for _, cr := range batch {
				code, _, err := s.attempt(client, c.target.Load().(string), "POST", cr.path, cr.body)
				for errors.Is(err, syscall.ECONNREFUSED) {
					time.Sleep(100 * time.Millisecond)
					code, _, err = s.attempt(client, c.target.Load().(string), "POST", cr.path, cr.body)
				}
				c.mu.Lock()
				c.outcomes[cr.path+"/"+cr.name] = outcome{code: code, err: err, at: time.Now()}
				c.mu.Unlock()
				if code == http.StatusCreated && c.acked.Add(1) == int32(signal) {
					close(c.reached)
				}
			}
		}()
	}
	return c
}

func (c *createClient) wait() map[string]outcome {
	c.done.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcomes
}

// Kill -9 of the leader mid-create. A client creates 8 batches
// concurrently — each a configmap, a secret and three applications of two
// instances taking both — on the leader, which is killed -9 once a third
// of them were acknowledged; the client goes on against the standby.
// Every acknowledged (201) creation exists with its spec; every other
// exists whole or not at all, and sent again gets 409 or 201 accordingly.
// Then every application runs exactly 2 instances, the master runs
// exactly those 48 task groups, and each game server has its configmap's
// and its secret's values in its environment.
func TestLeaderKilledMidCreate(t *testing.T) {
	s, leader, standby := startReplicas(t, embeddedEtcd(t).Endpoints()[0])
	const batches, appsPerBatch, instances = 8, 3, 2
	var all [][]creation
	want := map[string][]string{} // an application's game servers' environment has these
	for b := range batches {
		conf, password := fmt.Sprintf("level=%d", b), fmt.Sprintf("secret-%d-%d", b, time.Now().UnixNano())
		confB64, passwordB64 := base64.StdEncoding.EncodeToString([]byte(conf)), base64.StdEncoding.EncodeToString([]byte(password))
		confName, secretName, key := fmt.Sprintf("conf-%d", b), fmt.Sprintf("db-%d", b), fmt.Sprintf("password%d", b)
		batch := []creation{
			{path: "/v1/configmaps", name: confName, mark: confB64,
				body: fmt.Appendf(nil, `{"apiVersion":"v4","kind":"configmap","metadata":{"name":%q,"namespace":"demo"},"datas":{"game":{"type":"file","content":%q}}}`, confName, confB64)},
			// A secret's values are never shown: its mark is its item's
			// name; the game servers' environment shows the value.
			{path: "/v1/secrets", name: secretName, mark: key,
				body: fmt.Appendf(nil, `{"apiVersion":"v4","kind":"secret","metadata":{"name":%q,"namespace":"demo"},"datas":{%q:{"content":%q}}}`, secretName, key, passwordB64)},
		}
		for a := range appsPerBatch {
			name := fmt.Sprintf("app-%d-%d", b, a)
			want[name] = []string{"GAME_CONF=" + conf, "DB_PASSWORD=" + password}
			batch = append(batch, creation{path: "/v1/apps", name: name, mark: "mark-" + name,
				body: s.processApp(name, instances, func(_, proc map[string]any) {
					proc["env"] = append(proc["env"].([]any), map[string]any{"name": "MARK", "value": "mark-" + name})
					proc["configmaps"] = []any{map[string]any{"name": confName, "items": []any{
						map[string]any{"type": "env", "dataKey": "game", "keyOrPath": "GAME_CONF"}}}}
					proc["secrets"] = []any{map[string]any{"secretName": secretName, "items": []any{
						map[string]any{"type": "env", "dataKey": key, "keyOrPath": "DB_PASSWORD"}}}}
				})})
		}
		all = append(all, batch)
	}
	total := batches * (2 + appsPerBatch)

	client := s.createConcurrently(leader.api, all, total/3)
	select {
	case <-client.reached:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d creations acknowledged after 30s", client.acked.Load(), total)
	}
	killed := s.killLeader(leader, standby)
	client.target.Store(standby.api)
	s.answersAfter(killed, electionTTL+5*time.Second)
	outcomes := client.wait()

	var before, after, uncertain, refused int
	for _, batch := range all {
		for _, cr := range batch {
			o := outcomes[cr.path+"/"+cr.name]
			switch {
			case o.err != nil:
				uncertain++
				t.Logf("%s %s uncertain: %v", cr.path, cr.name, o.err)
			case o.code != http.StatusCreated:
				refused++ // e.g. 400: it takes a configmap whose creation was lost
			case o.at.Before(killed):
				before++
			default:
				after++
			}
			code, body := s.call("GET", cr.path+"/demo/"+cr.name, nil)
			whole := code == http.StatusOK && strings.Contains(string(body), cr.mark)
			if o.code == http.StatusCreated {
				if !whole {
					t.Errorf("%s %s was acknowledged, then: %d %.300s", cr.path, cr.name, code, body)
				}
				continue
			}
			if !whole && code != http.StatusNotFound {
				t.Errorf("%s %s, unacknowledged (%+v), is neither whole nor absent: %d %.300s", cr.path, cr.name, o, code, body)
			}
			// The client sends it again: it lands, or was there.
			resent := map[bool]int{true: http.StatusConflict, false: http.StatusCreated}[whole]
			if code, body := s.call("POST", cr.path, cr.body); code != resent {
				t.Errorf("%s %s sent again: %d %s, want %d", cr.path, cr.name, code, body, resent)
			}
		}
	}
	t.Logf("%d creations: %d acknowledged before the kill, %d after; %d uncertain, %d refused", total, before, after, uncertain, refused)
	if before == 0 || after == 0 {
		t.Errorf("want creations acknowledged both before and after the kill")
	}

	for name, env := range want {
		for _, inst := range s.settled("/v1/apps/demo/"+name, instances) {
			if got := s.gameServerEnv(name, inst); !slices.Contains(got, env[0]) || !slices.Contains(got, env[1]) {
				t.Errorf("%s instance %d: its environment lacks %q", name, inst.ID, env)
			}
		}
	}
	if groups := s.masterGroups(""); len(groups) != batches*appsPerBatch*instances {
		t.Errorf("the master runs %d task groups, want %d", len(groups), batches*appsPerBatch*instances)
	}
}

// Kill -9 of the leader mid-scale. An application scaled 5→50
// has its leader killed -9 while the master has launched some but not
// all of the new instances; the standby takes over. Then exactly 50
// instances run, the master runs exactly their 50 task groups (no
// orphan: a task the registry does not know would be killed) and exactly
// 50 game servers live on the machine.
func TestLeaderKilledMidScale(t *testing.T) {
	s, leader, standby := startReplicas(t, embeddedEtcd(t).Endpoints()[0])
	// restartPolicy Never: an instance whose launch the kill cut short
	// must be placed again all the same, and counted as no restart.
	never := func(m, _ map[string]any) { m["restartPolicy"] = map[string]any{"policy": "Never"} }
	if code, body := s.call("POST", "/v1/apps", s.processApp("big", 5, never)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.settled("/v1/apps/demo/big", 5)
	if code, body := s.call("POST", "/v1/apps/demo/big/scale", []byte(`{"instances":50}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	// The kill comes at the first sight of a new task group on the
	// master: the leader is then launching the others.
	var launched, running int
	for deadline := time.Now().Add(30 * time.Second); launched <= 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no new task group on the master 30s after the scale")
		}
		groups := s.masterGroups("demo_big_")
		launched, running = len(groups), 0
		for _, states := range groups {
			if slices.Equal(states, []string{"TASK_RUNNING"}) {
				running++
			}
		}
	}
	killed := s.killLeader(leader, standby)
	t.Logf("killed the leader with %d task groups of 50 on the master, %d running", launched, running)
	s.answersAfter(killed, electionTTL+5*time.Second)
	relaunched := 0
	for _, inst := range s.settled("/v1/apps/demo/big", 50) {
		if inst.Restarts != 0 {
			t.Errorf("instance %d restarted %d times: %q", inst.ID, inst.Restarts, inst.Message)
		}
		if launchOf(inst.TaskGroupID) > 1 {
			relaunched++
		}
	}
	t.Logf("%d instances launched again by the new leader (their launch never reached the master)", relaunched)
	if n := s.gameServersAlive("big"); n != 50 {
		t.Errorf("%d game servers of big alive, want 50", n)
	}
}

// rolloutStep is what the fault tests read of a rollout event.
type rolloutStep struct {
	Phase          string `json:"phase"`
	UpdateRevision int    `json:"updateRevision"`
	Step           int    `json:"currentStepIndex"`
	Wait           *struct {
		Kind  string    `json:"kind"`
		Step  int       `json:"step"`
		Since time.Time `json:"since"`
		Until time.Time `json:"until"`
	} `json:"wait"`
}

// Kill -9 of the leader mid-rollout. A deployment of 6 rolls
// out revision 2 by canary steps — partition 4, a pause until promote,
// partition 2, a pause of 2 s, then every instance — one instance at a
// time; the leader is killed -9 after the promote, while instance 3 is
// being replaced; the standby goes on from that step. The history of the
// rollout and of the instances, read from the event stream, shows the
// step index never going back and every step taken; instances 4 and 5
// updated in step 0, 2 and 3 in step 2, 0 and 1 in the last; each
// instance replaced exactly once (its second launch runs revision 2, no
// third launch ever).
func TestLeaderKilledMidRollout(t *testing.T) {
	s, leader, standby := startReplicas(t, embeddedEtcd(t).Endpoints()[0])
	strategy := map[string]any{"type": "RollingUpdate", "maxUnavailable": 1, "canary": map[string]any{"steps": []any{
		map[string]any{"partition": 4}, map[string]any{"pause": map[string]any{}},
		map[string]any{"partition": 2}, map[string]any{"pause": map[string]any{"duration": 2}}}}}
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("canary", 6, strategy, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.completed("canary", 1, "Completed")
	// The standby's stream goes on through the leader's death; its
	// writes are redirected to the leader.
	s.api = standby.api
	history := s.subscribe("?type=rollout,instance&namespace=demo", "")
	if code, body := s.call("PUT", "/v1/deployments/demo/canary", s.processDeployment("canary", 6, strategy, "v2", "gamesvr.tar.gz")); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	s.completed("canary", 2, "Paused")
	if code, body := s.call("POST", "/v1/deployments/demo/canary/promote", nil); code != 202 {
		t.Fatalf("promote: %d %s", code, body)
	}
	s.eventually("instance 3 being replaced", func() (bool, string) {
		v := s.deployment("canary")
		for _, inst := range v.Status.Instances {
			if inst.ID == 3 {
				return inst.Revision == 2 && !inst.Ready, fmt.Sprintf("%+v", inst)
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Instances)
	})
	s.answersAfter(s.killLeader(leader, standby), electionTTL+5*time.Second)
	final := s.completed("canary", 2, "Completed")

	changes := history.until("the rollout of revision 2 completed", func(c change) bool {
		var ro rolloutStep
		_ = json.Unmarshal(c.Object, &ro)
		return c.Type == "rollout" && ro.Phase == "Completed" && ro.UpdateRevision == 2
	})
	step, taken := 0, map[int]bool{}
	paused := map[int]time.Duration{} // step → how long its pause was set to last (0: until promote)
	updatedIn := map[int]int{}        // instance ID → the step its update began in
	for _, c := range changes {
		switch c.Type {
		case "rollout":
			var ro rolloutStep
			_ = json.Unmarshal(c.Object, &ro)
			if ro.UpdateRevision != 2 {
				continue
			}
			if ro.Step < step {
				t.Errorf("event %s: the rollout went back from step %d to %d", c.ID, step, ro.Step)
			}
			step, taken[ro.Step] = ro.Step, true
			if w := ro.Wait; ro.Phase == "Paused" && w != nil && w.Kind == "pause" && w.Step == ro.Step {
				paused[ro.Step] = max(w.Until.Sub(w.Since), 0)
			}
		case "instance":
			var inst rolloutInstance
			_ = json.Unmarshal(c.Object, &inst)
			if _, seen := updatedIn[inst.ID]; !seen && inst.Revision == 2 {
				updatedIn[inst.ID] = step
			}
			if launchOf(inst.TaskGroupID) > 2 {
				t.Errorf("event %s: instance %d in its launch %s: replaced more than once", c.ID, inst.ID, inst.TaskGroupID)
			}
		}
	}
	for i := range 5 {
		if !taken[i] {
			t.Errorf("step %d never shown: steps taken %v", i, taken)
		}
	}
	if want := map[int]time.Duration{1: 0, 3: 2 * time.Second}; !maps.Equal(paused, want) {
		t.Errorf("pauses shown %v, want %v", paused, want)
	}
	if wantIn := map[int]int{5: 0, 4: 0, 3: 2, 2: 2, 1: 4, 0: 4}; !maps.Equal(updatedIn, wantIn) {
		t.Errorf("instances updated in steps %v, want %v", updatedIn, wantIn)
	}
	for _, inst := range final {
		if inst.Revision != 2 || launchOf(inst.TaskGroupID) != 2 || !strings.Contains(version(inst), "build=v2") {
			t.Errorf("instance %d: %+v answers %q, want revision 2 (build v2) in its second launch", inst.ID, inst, version(inst))
		}
	}
	s.settled("/v1/deployments/demo/canary", 6)
	t.Logf("%d rollout and instance events; steps %v, pauses %v", len(changes), slices.Sorted(maps.Keys(taken)), paused)
}

// writer writes continuously: it creates a configmap every 100 ms and
// records what each creation got and how long it took.
type writer struct {
	stop, done chan struct{}
	mu         sync.Mutex
	writes     []write
}

type write struct {
	name     string
	code     int // 0: no answer
	body     []byte
	err      error
	at, took time.Time
}

func (s *system) writeContinuously() *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			name := fmt.Sprintf("w-%d", i)
			start := time.Now()
			code, body, err := s.attempt(client, s.api, "POST", "/v1/configmaps", fmt.Appendf(nil,
				`{"apiVersion":"v4","kind":"configmap","metadata":{"name":%q,"namespace":"load"},"datas":{"n":{"type":"file","content":"MQ=="}}}`, name))
			w.mu.Lock()
			w.writes = append(w.writes, write{name: name, code: code, body: body, err: err, at: start, took: time.Now()})
			w.mu.Unlock()
		}
	}()
	return w
}

// since is the first write sent after t that was taken (201), and how
// long after t it was sent.
func (w *writer) since(t time.Time) (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wr := range w.writes {
		if wr.at.After(t) && wr.code == http.StatusCreated {
			return wr.took.Sub(t), true
		}
	}
	return 0, false
}

func (w *writer) finish() []write {
	close(w.stop)
	<-w.done
	return w.writes
}

// An etcd restart under load. One bcs-scheduler on the etcd
// binary runs an application of 3 instances while a client creates a
// configmap every 100 ms. etcd is stopped with SIGTERM and started again
// on its data directory 3 s later (shorter than the election TTL: the
// leader keeps its session), then killed -9 and started again 7 s later
// (the leader loses its session, steps down and leads again). The same
// bcs-scheduler process carries on: every acknowledged write is there;
// every other failed with a 503 (never a 500) within 5 s; writes are
// taken again within 10 s of etcd's return; the instances were never
// killed (same task groups, same game server processes, the master's
// tasks RUNNING throughout), and a scale-up afterwards is carried out.
func TestEtcdRestartUnderLoad(t *testing.T) {
	etcd := storetest.StartEtcdBinary(t)
	s := startSystem(t, "--etcd-endpoints", etcd.Endpoints()[0])
	if code, body := s.call("POST", "/v1/apps", s.processApp("steady", 3, nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.settled("/v1/apps/demo/steady", 3)
	pids := map[int]int{}
	for _, inst := range before {
		pids[inst.ID] = pidOf(t, s.runPath(inst.Host, fmt.Sprintf("demo.steady.%d", inst.ID), "gamesvr.pid"))
	}
	load := s.writeContinuously()
	for _, outage := range []struct {
		signal syscall.Signal
		down   time.Duration
	}{{syscall.SIGTERM, 3 * time.Second}, {syscall.SIGKILL, 7 * time.Second}} {
		time.Sleep(time.Second) // some writes before
		etcd.Stop(outage.signal)
		time.Sleep(outage.down)
		etcd.Restart()
		back := time.Now()
		s.eventuallyWithin(20*time.Second, "writes taken again after etcd's return", func() (bool, string) {
			_, ok := load.since(back)
			return ok, ""
		})
		took, _ := load.since(back)
		t.Logf("etcd stopped with %s for %s: writes taken again %s after its return", outage.signal, outage.down, took.Round(time.Millisecond))
		if took > 10*time.Second {
			t.Errorf("writes taken again %s after etcd's return, want within 10s", took)
		}
		// Every instance kept running all along.
		for id, states := range s.masterGroups("demo_steady_") {
			if !slices.Equal(states, []string{"TASK_RUNNING"}) {
				t.Errorf("after etcd's return the master has %s %v", id, states)
			}
		}
	}
	writes := load.finish()

	var taken, failed int
	var slowest time.Duration
	for _, w := range writes {
		took := w.took.Sub(w.at)
		slowest = max(slowest, took)
		switch {
		case w.code == http.StatusCreated:
			taken++
			if code, body := s.call("GET", "/v1/configmaps/load/"+w.name, nil); code != http.StatusOK {
				t.Errorf("configmap %s was acknowledged, then: %d %s", w.name, code, body)
			}
		case w.code == http.StatusServiceUnavailable && strings.Contains(string(w.body), `"code": "Unavailable"`):
			failed++
			t.Logf("write %s: 503 after %s: %s", w.name, took.Round(time.Millisecond), bytes.Join(bytes.Fields(w.body), []byte(" ")))
		default:
			t.Errorf("write %s: %d %s %v after %s, want 201, or 503 Unavailable", w.name, w.code, w.body, w.err, took)
		}
		// The store's request timeout is 5 s; its 503 takes a few ms more.
		if took > 5*time.Second+500*time.Millisecond {
			t.Errorf("write %s answered %d after %s, want within 5s", w.name, w.code, took)
		}
	}
	t.Logf("%d writes: %d taken, %d refused with 503; the slowest answered in %s", len(writes), taken, failed, slowest.Round(time.Millisecond))
	if failed == 0 {
		t.Errorf("no write failed while etcd was down")
	}

	if s.scheduler.ProcessState != nil || !alive(s.scheduler.Process.Pid) {
		t.Fatalf("bcs-scheduler exited")
	}
	after := s.settled("/v1/apps/demo/steady", 3)
	for i, inst := range after {
		pid := pidOf(t, s.runPath(inst.Host, fmt.Sprintf("demo.steady.%d", inst.ID), "gamesvr.pid"))
		if inst.TaskGroupID != before[i].TaskGroupID || inst.Restarts != 0 || pid != pids[inst.ID] || !alive(pid) {
			t.Errorf("instance %d: %s pid %d (restarts %d), was %s pid %d", i, inst.TaskGroupID, pid, inst.Restarts, before[i].TaskGroupID, pids[i])
		}
	}
	if code, body := s.call("POST", "/v1/apps/demo/steady/scale", []byte(`{"instances":4}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.settled("/v1/apps/demo/steady", 4)
}

// An agent of the dev cluster goes away (the master removes it
// as partitioned: its tasks TASK_UNREACHABLE). An application of 6
// instances had some on it: those move to the other agents (new task
// groups), the others are untouched (same task groups, no restart); the
// master runs exactly 6 task groups, none on the removed agent, and
// shows the removed ones unreachable; the moved instances' game servers
// are gone; the API answers at once.
func TestAgentRemovedInstancesMove(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.processApp("spread", 6, nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.settled("/v1/apps/demo/spread", 6)
	perAgent := map[string][]instanceView{}
	for _, inst := range before {
		perAgent[inst.Agent] = append(perAgent[inst.Agent], inst)
	}
	var lost string
	for agent, insts := range perAgent {
		if lost == "" || len(insts) > len(perAgent[lost]) {
			lost = agent
		}
	}
	var lostPids []int
	for _, inst := range perAgent[lost] {
		lostPids = append(lostPids, pidOf(t, s.runPath(inst.Host, fmt.Sprintf("demo.spread.%d", inst.ID), "gamesvr.pid")))
	}
	resp, err := http.Post("http://"+s.control+"/agents/"+lost+"/remove", "", nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("remove agent %s: %v %v", lost, resp, err)
	}
	resp.Body.Close()
	removed := time.Now()
	s.answersAfter(removed, 5*time.Second)
	after := s.settled("/v1/apps/demo/spread", 6)
	t.Logf("%d instances moved off %s in %s", len(perAgent[lost]), lost, time.Since(removed).Round(time.Millisecond))
	for i, inst := range after {
		moved := before[i].Agent == lost
		switch {
		case inst.Agent == lost:
			t.Errorf("instance %d still on the removed agent", i)
		case moved && inst.TaskGroupID == before[i].TaskGroupID:
			t.Errorf("instance %d was on the removed agent and kept its task group %s", i, inst.TaskGroupID)
		case !moved && (inst.TaskGroupID != before[i].TaskGroupID || inst.Restarts != 0):
			t.Errorf("instance %d was elsewhere and changed: %s (restarts %d), was %s", i, inst.TaskGroupID, inst.Restarts, before[i].TaskGroupID)
		}
	}
	var unreachable []string
	for _, fw := range s.masterState().Frameworks {
		for _, task := range fw.Unreachable {
			if task.Agent == lost && task.State == "TASK_UNREACHABLE" {
				unreachable = append(unreachable, task.Executor)
			}
		}
	}
	if len(unreachable) != len(perAgent[lost]) {
		t.Errorf("the master shows %v unreachable, want the %d task groups of %s", unreachable, len(perAgent[lost]), lost)
	}
	for _, pid := range lostPids {
		if alive(pid) {
			t.Errorf("game server %d of the removed agent still runs", pid)
		}
	}
}
