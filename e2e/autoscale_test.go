package e2e_test

import (
	"encoding/json"
	"fmt"
	"github.com/bcs-mesos/bcs-mesos/internal/promtest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// The autoscaling suite: autoscalers on the leading scheduler size real
// fleets (game server processes, busybox containers) from a real
// Prometheus, the instances' reported CPU, allocations and schedule
// windows. Each test follows the leader's statuses through the event
// stream and checks the whole sequence of scales, not only where it ends,
// and counts what runs on the machine.

// autoscaleInterval is every test autoscaler's intervalSeconds, the
// shortest allowed.
const autoscaleInterval = 5 * time.Second

// exporter serves gauges a test sets, for a real Prometheus to scrape.
type exporter struct {
	gauge *prometheus.GaugeVec
	host  string // 127.0.0.1:port
}

func startExporter(t *testing.T, name string, labels ...string) *exporter {
	t.Helper()
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: "A value an e2e test sets."}, labels)
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(gauge)
	return &exporter{gauge: gauge, host: promtest.Serve(t, metrics)}
}

// promServer is a real Prometheus (promtest) scraping one exporter
// every second.
type promServer struct {
	t   *testing.T
	url string
}

// startPrometheus runs Prometheus on target and waits until query has
// series samples.
func startPrometheus(t *testing.T, target *exporter, query string, series int) *promServer {
	t.Helper()
	p := &promServer{t: t, url: promtest.Start(t, "e2e", target.host)}
	deadline := time.Now().Add(60 * time.Second)
	for {
		values, err := p.query(query)
		if err == nil && len(values) == series {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d series after 60s, want %d (%v)", query, len(values), series, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *promServer) host() string { return strings.TrimPrefix(p.url, "http://") }

// query returns an instant query's sample values.
func (p *promServer) query(expr string) ([]float64, error) {
	code, body := get(p.url + "/api/v1/query?query=" + url.QueryEscape(expr))
	var answer struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &answer); code != 200 || err != nil {
		return nil, fmt.Errorf("query %s: %d %v %.200s", expr, code, err, body)
	}
	var values []float64
	for _, r := range answer.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: sample %v", expr, r.Value)
		}
		values = append(values, v)
	}
	return values, nil
}

// sees waits until Prometheus has scraped want for expr (one sample):
// what the autoscaler reads from then on.
func (p *promServer) sees(expr string, want float64) time.Time {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		values, err := p.query(expr)
		if err == nil && len(values) == 1 && values[0] == want {
			return time.Now()
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %v %v after 10s, want %v", expr, values, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createAutoscaler stores the autoscaler demo/name of spec.
func (s *system) createAutoscaler(name string, spec map[string]any) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"apiVersion": "v4", "kind": "autoscaler",
		"metadata": map[string]any{"name": name, "namespace": "demo"}, "spec": spec})
	if code, answer := s.call("POST", "/v1/autoscalers", body); code != 201 {
		s.t.Fatalf("create autoscaler %s: %d %s", name, code, answer)
	}
}

// autoscalerStatus is what GET shows of demo/name's status (nil: none yet).
func (s *system) autoscalerStatus(name string) *manifest.AutoscalerStatus {
	s.t.Helper()
	code, body := s.call("GET", "/v1/autoscalers/demo/"+name, nil)
	var v struct {
		Status *manifest.AutoscalerStatus `json:"status"`
	}
	if err := json.Unmarshal(body, &v); code != 200 || err != nil {
		s.t.Fatalf("GET autoscaler %s: %d %v %s", name, code, err, body)
	}
	return v.Status
}

// allocation allocates (allocate) or releases (release) instance id of
// the workload at path (/v1/deployments/demo/x).
func (s *system) allocation(path string, id int, action string) {
	s.t.Helper()
	if code, body := s.call("POST", fmt.Sprintf("%s/instances/%d/%s", path, id, action), []byte(`{}`)); code != 200 {
		s.t.Fatalf("%s instance %d of %s: %d %s", action, id, path, code, body)
	}
}

// scaling follows one workload and its autoscaler through the event
// stream, from before the autoscaler exists: every size the workload's
// record asked for and every status the leader wrote, in order.
type scaling struct {
	s        *system
	workload string
	mu       sync.Mutex
	sizes    []int
	statuses []manifest.AutoscalerStatus
	checked  int // statuses until has looked at
}

// followScaling follows the workload demo/name, whose events have type
// workloadType (app, deployment), and its autoscaler of the same name.
func (s *system) followScaling(workloadType, name string) *scaling {
	s.t.Helper()
	f := &scaling{s: s, workload: name}
	sub := s.subscribe("?type="+workloadType+",autoscalerstatus&namespace=demo", "")
	go func() {
		for c := range sub.changes {
			if c.Name != name || c.Action != "put" {
				continue
			}
			f.mu.Lock()
			if c.Type == "autoscalerstatus" {
				var st manifest.AutoscalerStatus
				_ = json.Unmarshal(c.Object, &st)
				f.statuses = append(f.statuses, st)
			} else {
				var v appView
				_ = json.Unmarshal(c.Object, &v)
				f.sizes = append(f.sizes, v.Instances)
			}
			f.mu.Unlock()
		}
	}()
	return f
}

// until waits for the first status written since the last until returned
// that done accepts, and returns it.
func (f *scaling) until(what string, done func(st manifest.AutoscalerStatus) bool) manifest.AutoscalerStatus {
	f.s.t.Helper()
	var found manifest.AutoscalerStatus
	f.s.eventuallyWithin(60*time.Second, "no status of "+f.workload+" showing "+what+" within 60s", func() (bool, string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for ; f.checked < len(f.statuses); f.checked++ {
			if done(f.statuses[f.checked]) {
				found = f.statuses[f.checked]
				f.checked++
				return true, ""
			}
		}
		if len(f.statuses) == 0 {
			return false, "no status yet"
		}
		return false, describeStatus(f.statuses[len(f.statuses)-1])
	})
	return found
}

// scaledTo waits for a scale to size to.
func (f *scaling) scaledTo(to int) manifest.ScaleRecord {
	f.s.t.Helper()
	st := f.until(fmt.Sprintf("a scale to %d", to), func(st manifest.AutoscalerStatus) bool {
		return st.LastScale != nil && st.LastScale.To == to
	})
	return *st.LastScale
}

// steps are the scales recorded so far, as "from→to".
func (f *scaling) steps() []string {
	var steps []string
	for _, sc := range f.scales() {
		steps = append(steps, fmt.Sprintf("%d→%d", sc.From, sc.To))
	}
	return steps
}

// scales are the scales the statuses recorded so far, in order.
func (f *scaling) scales() []manifest.ScaleRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []manifest.ScaleRecord
	for _, st := range f.statuses {
		if ls := st.LastScale; ls != nil && (len(out) == 0 || !out[len(out)-1].At.Equal(ls.At)) {
			out = append(out, *ls)
		}
	}
	return out
}

// withinBounds checks that no status decided, and no record of the
// workload asked for, a size outside [lo, hi].
func (f *scaling) withinBounds(lo, hi int) {
	f.s.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.sizes {
		if n < lo || n > hi {
			f.s.t.Errorf("the record of %s asked for %d instances, outside %d…%d (sizes %v)", f.workload, n, lo, hi, f.sizes)
		}
	}
	for _, st := range f.statuses {
		if st.DesiredReplicas < lo || st.DesiredReplicas > hi {
			f.s.t.Errorf("a status of %s desired %d, outside %d…%d: %s", f.workload, st.DesiredReplicas, lo, hi, describeStatus(st))
		}
	}
}

// heldDownWindow checks the scale-down down against HPA's stabilization
// rule: every recommendation above its new size that a status showed
// was made at least window before it. It returns the latest of them.
func (f *scaling) heldDownWindow(down manifest.ScaleRecord, window time.Duration) time.Time {
	f.s.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var lastHigher time.Time
	for _, st := range f.statuses {
		for _, r := range st.Recommendations {
			if r.Replicas > down.To && r.At.Before(down.At) && r.At.After(lastHigher) {
				lastHigher = r.At
			}
		}
	}
	if lastHigher.IsZero() {
		f.s.t.Errorf("no status showed a recommendation above %d before the scale-down %+v", down.To, down)
	} else if gap := down.At.Sub(lastHigher); gap < window {
		f.s.t.Errorf("scaled down to %d at %s, %s after a recommendation above it: inside the %s down window",
			down.To, down.At.Format(time.StampMilli), gap, window)
	}
	return lastHigher
}

// describeStatus is a status in one line, for failures.
func describeStatus(st manifest.AutoscalerStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "current %d desired %d bounds %d…%d", st.CurrentReplicas, st.DesiredReplicas, st.Bounds.Min, st.Bounds.Max)
	for _, m := range st.Metrics {
		fmt.Fprintf(&b, "; %s current %v proposal %v %s", m.Name, deref(m.Current), deref(m.Proposal), m.Message)
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, "; %s %s %s", c.Type, c.Status, c.Reason)
	}
	if st.Message != "" {
		fmt.Fprintf(&b, "; %q", st.Message)
	}
	return b.String()
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// condition is st's condition of type typ ("": none).
func condition(st manifest.AutoscalerStatus, typ string) manifest.AutoscalerCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return manifest.AutoscalerCondition{}
}

// metricOf is st's metric name ("": none).
func metricOf(st manifest.AutoscalerStatus, name string) manifest.MetricStatus {
	for _, m := range st.Metrics {
		if m.Name == name {
			return m
		}
	}
	return manifest.MetricStatus{}
}

// serversAlive waits until exactly n game servers of the application
// name live on the machine.
func (s *system) serversAlive(name string, n int) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%d game servers of %s alive", n, name), func() (bool, string) {
		alive := s.gameServersAlive(name)
		return alive == n, fmt.Sprintf("%d alive", alive)
	})
}

// A real Prometheus scraping a gauge of players drives a process
// deployment between minReplicas 2 and maxReplicas 5 on a target of 10
// players per instance: 15 players hold 2 instances, 35 scale to 4, 100
// to 5 (the maximum, the metric asking for 10), 0 back to 2 — only once
// the 15 s down window has passed since the last higher recommendation,
// a decision held meanwhile. No status or record ever leaves 2…5, the
// scales are exactly 2→4, 4→5, 5→2, and the game servers on the machine
// follow.
func TestAutoscalePrometheus(t *testing.T) {
	players := startExporter(t, "e2e_players")
	players.gauge.WithLabelValues().Set(15)
	const query = "sum(e2e_players)"
	prom := startPrometheus(t, players, query, 1)
	s := startSystem(t, allowEgress(t, prom.host()))
	const path, downWindow = "/v1/deployments/demo/arena", 15 * time.Second
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("arena", 2, map[string]any{"type": "RollingUpdate"}, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.settled(path, 2)
	follow := s.followScaling("deployment", "arena")
	s.createAutoscaler("arena", map[string]any{
		"target":      map[string]any{"kind": "deployment", "name": "arena"},
		"minReplicas": 2, "maxReplicas": 5, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "prometheus", "name": "players",
			"prometheus": map[string]any{"address": prom.url, "query": query}, "targetAverageValue": 10}},
		"behavior": map[string]any{
			"scaleUp": map[string]any{"stabilizationWindowSeconds": 0,
				"policies": []any{map[string]any{"type": "Pods", "value": 10, "periodSeconds": 5}}},
			"scaleDown": map[string]any{"stabilizationWindowSeconds": int(downWindow.Seconds()),
				"policies": []any{map[string]any{"type": "Percent", "value": 100, "periodSeconds": 5}}},
		},
	})

	// An average value's current is per instance: 15 players on 2.
	st := follow.until("players read at 15", func(st manifest.AutoscalerStatus) bool {
		return deref(metricOf(st, "players").Current) == 7.5
	})
	if st.CurrentReplicas != 2 || st.DesiredReplicas != 2 || st.LastScale != nil || condition(st, "ScalingActive").Status != "True" {
		t.Errorf("15 players on 2 instances: %s, last scale %+v; want 2 kept, scaling active", describeStatus(st), st.LastScale)
	}

	players.gauge.WithLabelValues().Set(35)
	prom.sees(query, 35)
	follow.scaledTo(4)
	s.settled(path, 4)
	s.serversAlive("arena", 4)

	players.gauge.WithLabelValues().Set(100)
	prom.sees(query, 100)
	follow.scaledTo(5)
	st = follow.until("the players' proposal of 10 limited to 5", func(st manifest.AutoscalerStatus) bool {
		return st.CurrentReplicas == 5 && deref(metricOf(st, "players").Proposal) == 10
	})
	if c := condition(st, "ScalingLimited"); c.Status != "True" || c.Reason != "TooManyReplicas" {
		t.Errorf("100 players at most 5 instances: ScalingLimited %+v, want True TooManyReplicas", c)
	}
	s.settled(path, 5)
	s.serversAlive("arena", 5)

	players.gauge.WithLabelValues().Set(0)
	dropped := prom.sees(query, 0)
	down := follow.scaledTo(2)
	lastHigher := follow.heldDownWindow(down, downWindow)
	t.Logf("players 0 seen by Prometheus at %s, the last recommendation above 2 at %s, scaled down at %s",
		dropped.Format(time.StampMilli), lastHigher.Format(time.StampMilli), down.At.Format(time.StampMilli))
	// The last reading above 2 can precede Prometheus' scrape of 0 by an
	// interval, and that scrape precede dropped by a second.
	if early := dropped.Add(downWindow - autoscaleInterval - 2*time.Second); down.At.Before(early) {
		t.Errorf("scaled down at %s, before %s: the down window cannot have held", down.At.Format(time.StampMilli), early.Format(time.StampMilli))
	}
	if final := s.autoscalerStatus("arena"); final == nil || !slices.ContainsFunc(final.Decisions, func(d manifest.DecisionSummary) bool {
		return d.Current == 5 && d.Desired == 5 && d.Proposal < 5 && !d.Acted
	}) {
		t.Errorf("no decision held 5 against a lower proposal within the down window: %+v", final)
	}
	s.settled(path, 2)
	s.serversAlive("arena", 2)

	follow.withinBounds(2, 5)
	if steps, want := follow.steps(), []string{"2→4", "4→5", "5→2"}; !slices.Equal(steps, want) {
		t.Errorf("scales %v, want %v", steps, want)
	}
}

// serverPids are the pids of the game servers of instances of the
// application name, by instance ID.
func (s *system) serverPids(name string, instances []instanceView) map[int]int {
	s.t.Helper()
	pids := map[int]int{}
	for _, inst := range instances {
		pids[inst.ID] = pidOf(s.t, s.runPath(inst.Host, fmt.Sprintf("demo.%s.%d", name, inst.ID), "gamesvr.pid"))
	}
	return pids
}

// A buffer of 2 keeps two instances of a process deployment ready and
// not allocated as instances are allocated through the API (2 → 4 → 5
// instances) and, after the 10 s down window, shrinks when they are
// released (5 → 3). The scale-down removes the unallocated instances of
// fewest sessions — a per-instance gauge read from a real Prometheus by
// its instance_id label — not the highest IDs: instance 2 has the fewest
// of all but is allocated and stays; 1 and 4 go, leaving 0, 2 and 3, the
// same game server processes throughout.
func TestAutoscaleBufferAndAllocation(t *testing.T) {
	sessions := startExporter(t, "e2e_sessions", "instance_id")
	for id, n := range map[int]float64{0: 50, 1: 5, 2: 1, 3: 30, 4: 20} {
		sessions.gauge.WithLabelValues(strconv.Itoa(id)).Set(n)
	}
	prom := startPrometheus(t, sessions, "e2e_sessions", 5)
	s := startSystem(t, allowEgress(t, prom.host()))
	const path, downWindow = "/v1/deployments/demo/lobby", 10 * time.Second
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("lobby", 2, map[string]any{"type": "RollingUpdate"}, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.settled(path, 2)
	follow := s.followScaling("deployment", "lobby")
	s.createAutoscaler("lobby", map[string]any{
		"target":      map[string]any{"kind": "deployment", "name": "lobby"},
		"minReplicas": 2, "maxReplicas": 8, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "buffer", "buffer": map[string]any{"bufferSize": 2}}},
		"behavior": map[string]any{
			"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pods", "value": 10, "periodSeconds": 5}}},
			"scaleDown": map[string]any{"stabilizationWindowSeconds": int(downWindow.Seconds()),
				"policies": []any{map[string]any{"type": "Percent", "value": 100, "periodSeconds": 5}}},
		},
		"scaleDownOrder": map[string]any{"prometheus": map[string]any{"address": prom.url, "query": "e2e_sessions"}, "instanceLabel": "instance_id"},
	})
	st := follow.until("a decision on 2 instances", func(st manifest.AutoscalerStatus) bool { return st.CurrentReplicas == 2 })
	if st.DesiredReplicas != 2 || st.LastScale != nil {
		t.Errorf("nothing allocated, a buffer of 2 on 2: %s, last scale %+v", describeStatus(st), st.LastScale)
	}

	s.allocation(path, 0, "allocate")
	s.allocation(path, 1, "allocate")
	follow.scaledTo(4)
	s.settled(path, 4)
	s.allocation(path, 2, "allocate")
	follow.scaledTo(5)
	before := s.serverPids("lobby", s.settled(path, 5))
	s.serversAlive("lobby", 5)

	s.allocation(path, 0, "release")
	s.allocation(path, 1, "release")
	down := follow.scaledTo(3)
	follow.heldDownWindow(down, downWindow)
	var removed []int
	for _, r := range down.Removed {
		removed = append(removed, r.ID)
		t.Logf("removed instance %d: %s", r.ID, r.Why)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, []int{1, 4}) {
		t.Errorf("the scale-down removed %v, want [1 4]: the unallocated instances of fewest sessions", removed)
	}
	after := s.settledOn(path, []int{0, 2, 3})
	s.serversAlive("lobby", 3)
	for id, pid := range s.serverPids("lobby", after) {
		if pid != before[id] || !alive(pid) {
			t.Errorf("instance %d: game server %d, was %d: it must have run on", id, pid, before[id])
		}
	}
	for _, id := range []int{1, 4} {
		if alive(before[id]) {
			t.Errorf("instance %d was removed, its game server %d still runs", id, before[id])
		}
	}
	var page struct {
		Instances []struct {
			ID        int `json:"id"`
			Allocated *struct {
				Source string `json:"source"`
			} `json:"allocated"`
		} `json:"instances"`
	}
	_, body := s.call("GET", path+"/instances", nil)
	_ = json.Unmarshal(body, &page)
	for _, inst := range page.Instances {
		if allocated := inst.Allocated != nil; allocated != (inst.ID == 2) {
			t.Errorf("instance %d allocated %v; want only instance 2 allocated: %s", inst.ID, allocated, body)
		}
	}
	follow.withinBounds(2, 8)
	// Allocations a moment apart may be decided on apart: 2→3→4.
	if steps := strings.Join(follow.steps(), " "); steps != "2→4 4→5 5→3" && steps != "2→3 3→4 4→5 5→3" {
		t.Errorf("scales %v, want 2→4, 4→5, 5→3", steps)
	}
}

// burnerDeployment is a busybox deployment of one instance whose
// container burns CPU while /tmp/busy exists, up to its limit of half a
// core: 5 times what it requests.
func burnerDeployment(name string) []byte {
	d := map[string]any{
		"apiVersion": "v4", "kind": "deployment",
		"metadata":      map[string]any{"name": name, "namespace": "demo"},
		"restartPolicy": map[string]any{"policy": "Always", "interval": 3},
		"killPolicy":    map[string]any{"gracePeriod": 1},
		"spec": map[string]any{"instance": 1, "updateStrategy": map[string]any{"type": "RollingUpdate"},
			"template": map[string]any{"spec": map[string]any{"networkMode": "BRIDGE", "networkType": "cnm",
				"containers": []any{map[string]any{
					"image": "bcs-test/busybox:latest", "imagePullPolicy": "IfNotPresent", "command": "/bin/sh",
					"args":      []any{"-c", "while :; do while [ -f /tmp/busy ]; do :; done; sleep 1; done"},
					"resources": map[string]any{"requests": map[string]any{"cpu": "0.1"}, "limits": map[string]any{"cpu": "0.5", "memory": "32"}},
				}}}}},
	}
	out, _ := json.Marshal(d)
	return out
}

// A resource metric scales a busybox deployment on its containers' CPU
// as their executors report it (every 2 s here): on a target of 200 % of
// the 0.1 core requested, one container burning its half core (500 %)
// scales 1 → 3, the maximum, and the fleet stays there while it burns;
// once it stops, the fleet comes back to 1 after the 10 s down window,
// the burning instance (ID 0) kept.
func TestAutoscaleCPUBusybox(t *testing.T) {
	s := startSystem(t, "--usage-report-interval=2s")
	const path, downWindow = "/v1/deployments/demo/burner", 10 * time.Second
	if code, body := s.call("POST", "/v1/deployments", burnerDeployment("burner")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	first := s.settled(path, 1)[0]
	follow := s.followScaling("deployment", "burner")
	s.createAutoscaler("burner", map[string]any{
		"target":      map[string]any{"kind": "deployment", "name": "burner"},
		"minReplicas": 1, "maxReplicas": 3, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "resource", "resource": map[string]any{"name": "cpu", "targetAverageUtilization": 200}}},
		"behavior": map[string]any{
			"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pods", "value": 10, "periodSeconds": 5}}},
			"scaleDown": map[string]any{"stabilizationWindowSeconds": int(downWindow.Seconds()),
				"policies": []any{map[string]any{"type": "Percent", "value": 100, "periodSeconds": 5}}},
		},
	})
	idle := follow.until("the cpu use of the idle instance", func(st manifest.AutoscalerStatus) bool {
		return metricOf(st, "cpu").Current != nil
	})
	if cpu := *metricOf(idle, "cpu").Current; cpu >= 50 || idle.DesiredReplicas != 1 {
		t.Errorf("an idle busybox: %s; want below 50 %% of its request, 1 instance", describeStatus(idle))
	}

	if r := s.message(first.TaskGroupID, "exec", 200, `{"command":["touch","/tmp/busy"]}`); !r.OK {
		t.Fatalf("touch /tmp/busy: %+v", r)
	}
	up := follow.until("a scale to 3 on the burning instance's cpu", func(st manifest.AutoscalerStatus) bool {
		return st.LastScale != nil && st.LastScale.To == 3
	})
	t.Logf("scaled up: %s (%s)", describeStatus(up), up.LastScale.Reason)
	if cpu := metricOf(up, "cpu").Current; cpu == nil || *cpu <= 200 {
		t.Errorf("scaled up on a cpu use of %v %%, want above the 200 %% target", deref(cpu))
	}
	s.settled(path, 3)
	// Burning on 3 instances, the average (about 167 %) is below the
	// target, yet one fewer would put it above: the fleet holds.
	held := follow.until("a decision on 3 instances", func(st manifest.AutoscalerStatus) bool {
		return st.CurrentReplicas == 3 && st.LastScale != nil && st.UpdatedAt.After(st.LastScale.At)
	})
	if held.DesiredReplicas != 3 {
		t.Errorf("one instance burning among 3: %s; want 3 kept", describeStatus(held))
	}

	if r := s.message(first.TaskGroupID, "exec", 200, `{"command":["rm","/tmp/busy"]}`); !r.OK {
		t.Fatalf("rm /tmp/busy: %+v", r)
	}
	stopped := time.Now()
	down := follow.scaledTo(1)
	follow.heldDownWindow(down, downWindow)
	t.Logf("the burning stopped at %s, scaled down at %s", stopped.Format(time.StampMilli), down.At.Format(time.StampMilli))
	if last := s.settled(path, 1)[0]; last.TaskGroupID != first.TaskGroupID {
		t.Errorf("instance %s left, want the first one %s (the highest IDs go first)", last.TaskGroupID, first.TaskGroupID)
	}
	follow.withinBounds(1, 3)
	// A usage report taken while the burning stopped may count part of
	// it: under load the down window can then hold 2 for a decision
	// before 1.
	steps := strings.Join(follow.steps(), " ")
	if up, down, _ := strings.Cut(steps, " 3→"); (up != "1→3" && up != "1→2 2→3") || (down != "1" && down != "2 2→1") {
		t.Errorf("scales %s, want 1→3 3→1 (or through 2)", steps)
	}
}

// A schedule window, 6-field crons in Asia/Shanghai opening 15 s after
// the autoscaler is created and closing 20 s later, raises minReplicas to
// 4 in real time: the fleet of 1, which a buffer of 1 with nothing
// allocated keeps at 1, is scaled to 4 at the first decision after the
// opening and never before, the status naming the window and its end;
// after the closing the fleet follows its metric back to 1 through the 5 s
// down window, never before the closing.
func TestAutoscaleScheduleRealTime(t *testing.T) {
	zone, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	s := startSystem(t)
	const path, downWindow = "/v1/deployments/demo/party", 5 * time.Second
	if code, body := s.call("POST", "/v1/deployments", s.processDeployment("party", 1, map[string]any{"type": "RollingUpdate"}, "v1", "gamesvr.tar.gz")); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.settled(path, 1)
	follow := s.followScaling("deployment", "party")
	opens := time.Now().Add(15 * time.Second).Truncate(time.Second)
	closes := opens.Add(20 * time.Second)
	cron := func(at time.Time) string {
		at = at.In(zone)
		return fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour())
	}
	s.createAutoscaler("party", map[string]any{
		"target":      map[string]any{"kind": "deployment", "name": "party"},
		"minReplicas": 1, "maxReplicas": 6, "intervalSeconds": int(autoscaleInterval.Seconds()),
		"metrics": []any{map[string]any{"type": "buffer", "buffer": map[string]any{"bufferSize": 1}}},
		"behavior": map[string]any{
			"scaleUp": map[string]any{"policies": []any{map[string]any{"type": "Pods", "value": 10, "periodSeconds": 5}}},
			"scaleDown": map[string]any{"stabilizationWindowSeconds": int(downWindow.Seconds()),
				"policies": []any{map[string]any{"type": "Percent", "value": 100, "periodSeconds": 5}}},
		},
		"schedule": []any{map[string]any{"name": "launch-party", "start": cron(opens), "end": cron(closes),
			"timeZone": "Asia/Shanghai", "minReplicas": 4}},
	})

	before := follow.until("a first decision", func(manifest.AutoscalerStatus) bool { return true })
	if !before.UpdatedAt.Before(opens) {
		t.Fatalf("the first decision came at %s, after the window opened at %s", before.UpdatedAt.Format(time.StampMilli), opens.Format(time.StampMilli))
	}
	if before.Bounds.Min != 1 || len(before.Bounds.Windows) != 0 || before.DesiredReplicas != 1 {
		t.Errorf("before the window: %s, windows %+v; want bounds 1…6, 1 kept", describeStatus(before), before.Bounds.Windows)
	}
	during := follow.until("a scale to 4", func(st manifest.AutoscalerStatus) bool { return st.LastScale != nil && st.LastScale.To == 4 })
	up := during.LastScale
	t.Logf("the window opened at %s; scaled up at %s: %s", opens.Format(time.StampMilli), up.At.Format(time.StampMilli), up.Reason)
	if up.At.Before(opens) || up.At.After(opens.Add(autoscaleInterval+3*time.Second)) {
		t.Errorf("scaled to 4 at %s, want within an interval after the window opened at %s", up.At.Format(time.StampMilli), opens.Format(time.StampMilli))
	}
	if w := during.Bounds.Windows; during.Bounds.Min != 4 || len(w) != 1 || w[0].Name != "launch-party" || !w[0].Until.Equal(closes) {
		t.Errorf("while open: bounds %+v, want min 4 from launch-party until %s", during.Bounds, closes)
	}
	s.settled(path, 4)
	s.serversAlive("party", 4)

	down := follow.scaledTo(1)
	t.Logf("the window closed at %s; scaled down at %s", closes.Format(time.StampMilli), down.At.Format(time.StampMilli))
	if down.At.Before(closes) || down.At.After(closes.Add(downWindow+autoscaleInterval+3*time.Second)) {
		t.Errorf("scaled to 1 at %s, want after the window closed at %s and within the down window and an interval", down.At.Format(time.StampMilli), closes.Format(time.StampMilli))
	}
	follow.heldDownWindow(down, downWindow)
	s.settled(path, 1)
	s.serversAlive("party", 1)
	follow.withinBounds(1, 4)
	if steps := strings.Join(follow.steps(), " "); steps != "1→4 4→1" {
		t.Errorf("scales %s, want 1→4 4→1", steps)
	}
}
