package devcluster

import (
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// routeViews serves the master's read-only JSON views in the readonly
// realm, each under /master/ and at the root (libprocess hands a path
// naming no process to the master). Only /state keeps .json aliases, as
// masters before 0.25 had; a 1.12 master serves none.
func (m *master) routeViews(mux *http.ServeMux) {
	for _, v := range []struct {
		view  func(url.Values) any
		paths []string
	}{
		{func(url.Values) any { return m.state() }, []string{"/master/state", "/master/state.json", "/state", "/state.json"}},
		{m.frameworksView, []string{"/master/frameworks", "/frameworks"}},
		{m.tasksView, []string{"/master/tasks", "/tasks"}},
	} {
		h := m.security.authenticated(realmReadonly, ignoringPrincipal(m.serveView(v.view)))
		for _, p := range v.paths {
			mux.HandleFunc(p, h)
		}
	}
}

// serveView answers a GET with what view renders from the request's query
// under m.mu.
func (m *master) serveView(view func(url.Values) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeHTTPError(w, &httpError{http.StatusMethodNotAllowed, "Expecting one of { 'GET', 'HEAD' }, but received '" + r.Method + "'"})
			return
		}
		query := r.URL.Query()
		m.mu.Lock()
		v := view(query)
		m.mu.Unlock()
		w.Header().Set("Content-Type", mediaJSON)
		_ = json.NewEncoder(w).Encode(v)
	}
}

// frameworksView is what GET /master/frameworks serves: the frameworks
// of /master/state, those of the framework_id parameter if given, and
// unregistered_frameworks, which Mesos keeps empty for old clients.
// Caller holds m.mu.
func (m *master) frameworksView(query url.Values) any {
	registered, completed := m.frameworkLists(selectID(query, "framework_id"))
	return map[string]any{
		"frameworks":              m.stateFrameworks(registered),
		"completed_frameworks":    m.stateFrameworks(completed),
		"unregistered_frameworks": []any{},
	}
}

// defaultTaskLimit is how many tasks /master/tasks serves without a
// limit parameter (Mesos' TASK_LIMIT).
const defaultTaskLimit = 100

// tasksView is what GET /master/tasks serves: every task of /master/state
// (each framework's tasks, unreachable and completed tasks, registered
// frameworks before completed ones) that the framework_id and task_id
// parameters accept, sorted by the time of its first status, latest first
// unless order=asc (any other order is descending), then the page of
// limit tasks from offset. Caller holds m.mu.
func (m *master) tasksView(query url.Values) any {
	selectTask := selectID(query, "task_id")
	registered, completed := m.frameworkLists(selectID(query, "framework_id"))
	var tasks []*task
	for _, fw := range slices.Concat(registered, completed) {
		live, unreachable, done := fw.taskLists()
		for _, t := range slices.Concat(live, unreachable, done) {
			if selectTask.accepts(t.info.TaskID.Value) {
				tasks = append(tasks, t)
			}
		}
	}
	order, _ := lastValue(query, "order")
	slices.SortStableFunc(tasks, func(a, b *task) int {
		if order == "asc" {
			return cmp.Compare(firstStatusTime(a), firstStatusTime(b))
		}
		return cmp.Compare(firstStatusTime(b), firstStatusTime(a))
	})
	from, to := taskPage(len(tasks), queryInt(query, "limit", defaultTaskLimit), queryInt(query, "offset", 0))
	return map[string]any{"tasks": stateTasks(tasks[from:to])}
}

// firstStatusTime is when t's first status was stamped; a task without
// one sorts as the oldest, as in Mesos' TaskComparator.
func firstStatusTime(t *task) float64 {
	if len(t.statuses) == 0 {
		return math.Inf(-1)
	}
	return t.statuses[0].GetTimestamp()
}

// taskPage is the part [from, to) of n tasks that /master/tasks serves.
// Mesos converts limit and offset to size_t and takes the tasks from
// offset to min(offset+limit, n), so a negative limit is no limit (unless
// the sum wraps below offset) and a negative offset an empty page; the
// arithmetic here wraps the same way.
func taskPage(n int, limit, offset int32) (from, to int) {
	start := uint64(int64(offset))
	end := min(start+uint64(int64(limit)), uint64(n))
	if start >= end {
		return 0, 0
	}
	return int(start), int(end)
}

// queryInt reads an int parameter as Mesos does (stout's numify<int>): a
// decimal or 0x-hexadecimal int32. Mesos takes a value it cannot read, as
// a missing one, for the default: limit=abc is the default limit.
func queryInt(query url.Values, key string, def int32) int32 {
	s, ok := lastValue(query, key)
	if !ok {
		return def
	}
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(v)
	}
	digits, negative := strings.CutPrefix(s, "-")
	if len(digits) < 2 || digits[0] != '0' || (digits[1] != 'x' && digits[1] != 'X') {
		return def
	}
	v, err := strconv.ParseUint(digits[2:], 16, 32)
	if err != nil || v > math.MaxInt32 {
		return def
	}
	if negative {
		return -int32(v)
	}
	return int32(v)
}

// lastValue is a query parameter as libprocess decodes a query: the last
// of repeated keys wins, a key without "=" has the empty value.
func lastValue(query url.Values, key string) (string, bool) {
	vs := query[key]
	if len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

// idSelector is a view's ID parameter (framework_id, task_id), Mesos'
// IDAcceptor: absent, it accepts every ID; present, only that one (none
// when empty).
type idSelector struct {
	id  string
	set bool
}

var everyID = idSelector{}

func selectID(query url.Values, key string) idSelector {
	id, set := lastValue(query, key)
	return idSelector{id, set}
}

func (s idSelector) accepts(id string) bool { return !s.set || id == s.id }
