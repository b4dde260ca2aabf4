package scheduler_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
)

// Status updates applied in one step (as the driver gathers
// them) end where the same updates applied one step each end: the same
// records stored, the same statuses, the same calls.
func TestGatheredStatusUpdatesEndAsOneByOne(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	oneByOne, tasks := launchedCore(t, 3, 20, false)
	gathered, _ := launchedCore(t, 3, 20, false)
	healthy, unhealthy := true, false
	var statuses []mesos.TaskStatus
	for i, task := range tasks {
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: task.task}, AgentID: &mesos.AgentID{Value: task.agent},
			State: mesos.TASK_RUNNING.Enum(), UUID: []byte{byte(i)}}
		switch i % 4 {
		case 0:
			st.Healthy = &unhealthy
		case 1:
			st.State = mesos.TASK_FAILED.Enum() // restarted: its next launch waits for offers
		case 2: // twice: the second replaces the first's write
			st.Healthy = &healthy
			statuses = append(statuses, st)
			st.Healthy = &unhealthy
		}
		statuses = append(statuses, st)
	}
	statuses = append(statuses, mesos.TaskStatus{TaskID: mesos.TaskID{Value: "unknown-task"}, AgentID: &mesos.AgentID{Value: "agent-1"},
		State: mesos.TASK_RUNNING.Enum(), UUID: []byte{1}}) // killed: no launch of ours

	want := outcome{}
	for _, st := range statuses {
		want.add(oneByOne.Step(now, scheduler.StatusUpdates{Statuses: []mesos.TaskStatus{st}}))
	}
	got := outcome{}
	out := got.add(gathered.Step(now, scheduler.StatusUpdates{Statuses: statuses}))
	perKey := map[string]int{}
	for _, w := range out.Writes {
		switch {
		case w.TaskGroup != nil:
			perKey[fmt.Sprintf("instance %s/%s/%d", w.TaskGroup.Namespace, w.TaskGroup.App, w.TaskGroup.Index)]++
		case w.AppStatus != nil:
			perKey["status "+w.AppStatus.Name]++
		}
	}
	for key, n := range perKey {
		if n > 1 {
			t.Errorf("%s written %d times in one step, want once", key, n)
		}
	}
	for _, diff := range want.diff(got) {
		t.Error(diff)
	}
	if stale := scheduler.StaleKept(gathered); len(stale) > 0 {
		t.Errorf("kept state differs from a recomputation: %v", stale)
	}
}

// outcome is what steps stored last under each key and the calls they
// sent.
type outcome struct {
	stored map[string]string // record key → JSON
	calls  []string
}

func (o *outcome) add(out scheduler.Output) scheduler.Output {
	if o.stored == nil {
		o.stored = map[string]string{}
	}
	for _, w := range out.Writes {
		key := ""
		switch {
		case w.TaskGroup != nil:
			key = fmt.Sprintf("instance %s/%s/%d", w.TaskGroup.Namespace, w.TaskGroup.App, w.TaskGroup.Index)
		case w.AppStatus != nil:
			key = "status " + w.AppStatus.Namespace + "/" + w.AppStatus.Name
		default:
			continue
		}
		data, _ := json.Marshal(w)
		o.stored[key] = string(data)
	}
	for _, c := range out.Calls {
		o.calls = append(o.calls, c.String())
	}
	return out
}

func (o outcome) diff(other outcome) []string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(o.stored)) {
		if o.stored[k] != other.stored[k] {
			diffs = append(diffs, fmt.Sprintf("%s: one by one %s, gathered %s", k, o.stored[k], other.stored[k]))
		}
	}
	for k := range other.stored {
		if _, ok := o.stored[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: stored only when gathered", k))
		}
	}
	slices.Sort(o.calls)
	slices.Sort(other.calls)
	if !slices.Equal(o.calls, other.calls) {
		diffs = append(diffs, fmt.Sprintf("calls differ:\none by one %v\ngathered %v", o.calls, other.calls))
	}
	return diffs
}
