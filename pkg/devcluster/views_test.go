package devcluster_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// getView GETs one of the master's JSON views and decodes its object.
func getView(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %s, Content-Type %q", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return v
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func objects(v any) []map[string]any {
	var out []map[string]any
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func ids(objs []map[string]any) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o["id"].(string))
	}
	return out
}

func keys(v map[string]any) []string { return slices.Sorted(maps.Keys(v)) }

// fourTasksTwoFrameworks makes a cluster whose master has a task in each
// of /master/state's lists, launched one after the other: b1 of framework
// "other", torn down (completed framework, TASK_KILLED), then a1
// (finished, completed), a2 (its agent removed, unreachable) and a3
// (running) of framework "main", which is then disconnected so that
// nothing changes any more (no offers, same tasks).
func fourTasksTwoFrameworks(t *testing.T) (c *devcluster.Cluster, mainID, otherID string) {
	t.Helper()
	c = startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}, {}} })
	one, two := c.Agents()[0], c.Agents()[1]

	other := subscribe(t, c, frameworkInfo(func(i *mesos.FrameworkInfo) { i.Name = "other" }), jsonCodec)
	o := other.awaitOffer()
	launchGroup(other, o, executorInfo(other.fwID, "eb"), taskInfo(o, "b1"))
	other.awaitAck("b1", mesos.TASK_STARTING)
	other.awaitAck("b1", mesos.TASK_RUNNING)
	other.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	other.streamEnded()

	main := subscribe(t, c, frameworkInfo(func(i *mesos.FrameworkInfo) { i.Name = "main" }), jsonCodec)
	offers := map[string]mesos.Offer{}
	for len(offers) < 2 {
		for _, o := range main.await("OFFERS", isType(scheduler.Event_OFFERS)).Offers.Offers {
			offers[o.AgentID.Value] = o
		}
	}
	launch := func(o mesos.Offer, id string) {
		t.Helper()
		launchGroup(main, o, executorInfo(main.fwID, "e-"+id), taskInfo(o, id))
		main.awaitAck(id, mesos.TASK_STARTING)
		main.awaitAck(id, mesos.TASK_RUNNING)
	}
	launch(offers[one], "a1")
	launch(offers[two], "a2")
	again := main.await("agent one offered again", offerFor(main, one)).Offers.Offers
	launch(again[slices.IndexFunc(again, func(o mesos.Offer) bool { return o.AgentID.Value == one })], "a3")
	if err := c.FinishTask(main.fwID, "a1"); err != nil {
		t.Fatal(err)
	}
	main.awaitAck("a1", mesos.TASK_FINISHED)
	if err := c.RemoveAgent(two); err != nil {
		t.Fatal(err)
	}
	main.await("a2 unreachable", isUpdate("a2", mesos.TASK_UNREACHABLE))

	main.disconnect()
	deadline := time.Now().Add(waitTimeout)
	for {
		fws := objects(getView(t, c.MasterURL()+"/master/frameworks")["frameworks"])
		if len(fws) == 1 && fws[0]["connected"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("framework main still connected after its stream closed: %v", fws)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c, main.fwID, other.fwID
}

// GET /master/tasks as a Mesos 1.12 master serves it
// (src/master/readonly_handler.cpp, ReadOnlyHandler::tasks): {"tasks": [...]}
// of every framework's tasks, unreachable and completed tasks, completed
// frameworks' too, sorted by their first status's timestamp, descending
// unless order=asc; limit (default 100) tasks from offset, both read as
// numify<int> (unreadable: the default; negative: size_t arithmetic);
// framework_id and task_id select one ID each (IDAcceptor).
func TestMasterTasksEndpoint(t *testing.T) {
	c, mainID, otherID := fourTasksTwoFrameworks(t)
	master := c.MasterURL()

	all := getView(t, master+"/master/tasks")
	if got := keys(all); !slices.Equal(got, []string{"tasks"}) {
		t.Errorf("/master/tasks has %v, want only tasks", got)
	}
	states := map[string]string{}
	for _, task := range objects(all["tasks"]) {
		states[task["id"].(string)] = task["state"].(string)
	}
	if want := map[string]string{"a1": "TASK_FINISHED", "a2": "TASK_UNREACHABLE", "a3": "TASK_RUNNING", "b1": "TASK_KILLED"}; !reflect.DeepEqual(states, want) {
		t.Errorf("tasks %v, want %v", states, want)
	}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"a3", "a2", "a1", "b1"}},
		{"order=asc", []string{"b1", "a1", "a2", "a3"}},
		{"order=des", []string{"a3", "a2", "a1", "b1"}},
		{"order=desc", []string{"a3", "a2", "a1", "b1"}}, // only "asc" is ascending
		{"order=ASC", []string{"a3", "a2", "a1", "b1"}},
		{"limit=2", []string{"a3", "a2"}},
		{"limit=2&offset=1", []string{"a2", "a1"}},
		{"limit=2&offset=1&order=asc", []string{"a1", "a2"}},
		{"offset=3", []string{"b1"}},
		{"offset=4", []string{}},
		{"limit=0", []string{}},
		{"limit=0x2", []string{"a3", "a2"}},                     // numify reads hexadecimal
		{"limit=1&limit=3", []string{"a3", "a2", "a1"}},         // the last value wins
		{"limit=abc", []string{"a3", "a2", "a1", "b1"}},         // unreadable: the default, 100
		{"limit=2.5", []string{"a3", "a2", "a1", "b1"}},         // not an int
		{"limit=99999999999", []string{"a3", "a2", "a1", "b1"}}, // beyond an int
		{"offset=abc", []string{"a3", "a2", "a1", "b1"}},
		{"limit=-1", []string{"a3", "a2", "a1", "b1"}}, // size_t: no limit
		{"limit=-2&offset=1", []string{"a2", "a1", "b1"}},
		{"limit=-1&offset=1", []string{}}, // offset+limit wraps to 0
		{"offset=-1", []string{}},
		{"framework_id=" + mainID, []string{"a3", "a2", "a1"}},
		{"framework_id=" + otherID, []string{"b1"}},
		{"framework_id=unknown", []string{}},
		{"framework_id=", []string{}},
		{"task_id=a2", []string{"a2"}},
		{"task_id=b1&framework_id=" + otherID, []string{"b1"}},
		{"task_id=b1&framework_id=" + mainID, []string{}},
		{"task_id=", []string{}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			got := getView(t, master+"/master/tasks?"+tc.query)
			if ids := ids(objects(got["tasks"])); !slices.Equal(ids, tc.want) {
				t.Errorf("/master/tasks?%s: %v, want %v", tc.query, ids, tc.want)
			}
		})
	}

	// As libprocess hands /tasks to the master; 1.12 has no tasks.json.
	if root := getView(t, master+"/tasks?order=asc"); !slices.Equal(ids(objects(root["tasks"])), []string{"b1", "a1", "a2", "a3"}) {
		t.Errorf("/tasks?order=asc: %v", root)
	}
	for _, path := range []string{"/master/tasks.json", "/tasks.json"} {
		if status := getStatus(t, master+path); status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
}

// A task of /master/tasks is the object /master/state lists (Mesos writes
// both with the same JSON model of a Task), whichever list holds it.
func TestMasterTasksAreTheStateTasks(t *testing.T) {
	c, _, _ := fourTasksTwoFrameworks(t)
	state := getView(t, c.MasterURL()+"/master/state")
	tasks := objects(getView(t, c.MasterURL()+"/master/tasks")["tasks"])
	inState := map[string]map[string]any{}
	for _, list := range []string{"frameworks", "completed_frameworks"} {
		for _, fw := range objects(state[list]) {
			for _, tasks := range []string{"tasks", "unreachable_tasks", "completed_tasks"} {
				for _, task := range objects(fw[tasks]) {
					inState[task["id"].(string)] = task
				}
			}
		}
	}
	if len(tasks) != 4 || len(inState) != 4 {
		t.Fatalf("%d tasks in /master/tasks, %d in /master/state, want 4", len(tasks), len(inState))
	}
	for _, task := range tasks {
		if want := inState[task["id"].(string)]; !reflect.DeepEqual(task, want) {
			t.Errorf("/master/tasks has\n%v\n/master/state\n%v", task, want)
		}
	}
}

// GET /master/frameworks as a Mesos 1.12 master serves it
// (ReadOnlyHandler::frameworks): the frameworks and completed frameworks
// as /master/state lists them, unregistered_frameworks always empty, and
// framework_id selecting one.
func TestMasterFrameworksEndpoint(t *testing.T) {
	c, mainID, otherID := fourTasksTwoFrameworks(t)
	master := c.MasterURL()
	state := getView(t, master+"/master/state")

	all := getView(t, master+"/master/frameworks")
	if got := keys(all); !slices.Equal(got, []string{"completed_frameworks", "frameworks", "unregistered_frameworks"}) {
		t.Errorf("/master/frameworks has %v", got)
	}
	for _, list := range []string{"frameworks", "completed_frameworks"} {
		if !reflect.DeepEqual(all[list], state[list]) {
			t.Errorf("%s of /master/frameworks\n%v\nof /master/state\n%v", list, all[list], state[list])
		}
	}
	if got := ids(objects(all["frameworks"])); !slices.Equal(got, []string{mainID}) {
		t.Errorf("frameworks %v, want %s", got, mainID)
	}

	for _, tc := range []struct {
		query                string
		registered, complete []string
	}{
		{"", []string{mainID}, []string{otherID}},
		{"framework_id=" + mainID, []string{mainID}, []string{}},
		{"framework_id=" + otherID, []string{}, []string{otherID}},
		{"framework_id=unknown", []string{}, []string{}},
		{"framework_id=", []string{}, []string{}},
		{"framework_id=unknown&framework_id=" + otherID, []string{}, []string{otherID}}, // the last value wins
	} {
		for _, path := range []string{"/master/frameworks", "/frameworks"} {
			t.Run(path+"?"+tc.query, func(t *testing.T) {
				got := getView(t, master+path+"?"+tc.query)
				registered, completed := ids(objects(got["frameworks"])), ids(objects(got["completed_frameworks"]))
				if !slices.Equal(registered, tc.registered) || !slices.Equal(completed, tc.complete) {
					t.Errorf("frameworks %v, completed %v; want %v, %v", registered, completed, tc.registered, tc.complete)
				}
				if u, ok := got["unregistered_frameworks"].([]any); !ok || len(u) != 0 {
					t.Errorf("unregistered_frameworks %v, want []", got["unregistered_frameworks"])
				}
			})
		}
	}
	if status := getStatus(t, master+"/master/frameworks.json"); status != http.StatusNotFound {
		t.Errorf("GET /master/frameworks.json: %d, want 404", status)
	}
}

// /master/tasks serves at most 100 tasks (Mesos' TASK_LIMIT) unless
// limit says otherwise; a limit it cannot read is that default.
func TestMasterTasksDefaultLimit(t *testing.T) {
	c := startCluster(t, func(cfg *devcluster.Config) { cfg.Agents = []devcluster.AgentSpec{{}} })
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	var ops calls.OfferOperations
	for i := range 101 {
		ti := taskInfo(o, fmt.Sprintf("t%03d", i))
		ti.Resources = []mesos.Resource{scalar("cpus", 0.01), scalar("mem", 1)}
		cmd := "sleep 3600"
		ti.Command = &mesos.CommandInfo{Value: &cmd}
		ops = append(ops, calls.OpLaunch(ti))
	}
	s.mustCall(calls.Accept(ops.WithOffers(o.ID)))
	s.await("t100 launched", isUpdate("t100", mesos.TASK_STARTING))

	for query, want := range map[string]int{"": 100, "limit=abc": 100, "limit=": 100, "limit=101": 101, "limit=-1": 101, "offset=99": 2, "limit=7": 7} {
		got := objects(getView(t, c.MasterURL()+"/master/tasks?"+query)["tasks"])
		if len(got) != want {
			t.Errorf("/master/tasks?%s: %d tasks, want %d", query, len(got), want)
		}
	}
}
