package constraint_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/constraint"
	"github.com/bcs-mesos/bcs-mesos/pkg/constraint/constrainttest"
)

// agent returns an agent with TEXT attributes given as name, value pairs.
func agent(id, hostname string, attrs ...string) *constraint.Agent {
	a := &constraint.Agent{ID: id, Hostname: hostname, Attributes: map[string]constraint.Value{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		a.Attributes[attrs[i]] = constraint.Text(attrs[i+1])
	}
	return a
}

// cluster is three agents in two IDCs and three districts; slave3 has no
// district.
func cluster() []*constraint.Agent {
	return []*constraint.Agent{
		agent("a1", "slave1", "idc", "sz", "district", "shenzhen"),
		agent("a2", "slave2", "idc", "sz", "district", "shanghai"),
		agent("a3", "slave3", "idc", "sh"),
		agent("a4", "mesos-slave-1", "idc", "sh", "district", "tianjin"),
	}
}

type operatorCase struct {
	name      string
	condition constraint.UnionData
	placed    []string            // agent IDs already running an instance of the app
	labels    map[string][]string // agent ID → labels of active instances
	fits      map[string]bool     // agent ID → expected verdict
}

func TestOperators(t *testing.T) {
	cases := []operatorCase{
		{
			name:      "seed 000: UNIQUE hostname, one instance per host",
			condition: constrainttest.Unique("hostname"),
			placed:    []string{"a1"},
			fits:      map[string]bool{"a1": false, "a2": true, "a3": true},
		},
		{
			name:      "UNIQUE idc: one instance per IDC",
			condition: constrainttest.Unique("idc"),
			placed:    []string{"a1"},
			fits:      map[string]bool{"a1": false, "a2": false, "a3": true, "a4": true},
		},
		{
			name:      "UNIQUE on a missing attribute never fits",
			condition: constrainttest.Unique("rack"),
			fits:      map[string]bool{"a1": false},
		},
		{
			name:      "seed 000: MAXPER idc 2 allows a second instance, not a third",
			condition: constrainttest.MaxPer("idc", 2),
			placed:    []string{"a1", "a2", "a3"},
			fits:      map[string]bool{"a1": false, "a2": false, "a3": true, "a4": true},
		},
		{
			name:      "seed 000: CLUSTER section with set {shenzhen, dongguan}",
			condition: constrainttest.Cluster("district", "shenzhen", "dongguan"),
			fits:      map[string]bool{"a1": true, "a2": false, "a3": false, "a4": false},
		},
		{
			name:      "CLUSTER with text value",
			condition: constrainttest.Cluster("hostname", "slave2"),
			fits:      map[string]bool{"a1": false, "a2": true},
		},
		{
			name:      "seed 000: LIKE hostname mesos-slave-[1-2]",
			condition: constrainttest.Like("hostname", "mesos-slave-[1-2]"),
			fits:      map[string]bool{"a1": false, "a4": true},
		},
		{
			name:      "LIKE is anchored: slave[3-5] does not match mesos-slave-3 or slave33",
			condition: constrainttest.Like("hostname", "slave[3-5]"),
			fits:      map[string]bool{"a1": false, "a3": true, "a4": false},
		},
		{
			name:      "LIKE with a set matches any pattern",
			condition: constrainttest.Like("hostname", "slave1", "mesos-.*"),
			fits:      map[string]bool{"a1": true, "a2": false, "a4": true},
		},
		{
			name:      "LIKE on a missing attribute never fits",
			condition: constrainttest.Like("district", ".*"),
			fits:      map[string]bool{"a3": false, "a1": true},
		},
		{
			name:      "seed 000: UNLIKE hostname slave[1-2]",
			condition: constrainttest.Unlike("hostname", "slave[1-2]"),
			fits:      map[string]bool{"a1": false, "a2": false, "a3": true, "a4": true},
		},
		{
			name:      "UNLIKE with a set must match none",
			condition: constrainttest.Unlike("district", "shen.*", "tian.*"),
			fits:      map[string]bool{"a1": false, "a2": true, "a4": false},
		},
		{
			name:      "UNLIKE on a missing attribute fits",
			condition: constrainttest.Unlike("district", ".*"),
			fits:      map[string]bool{"a3": true, "a1": false},
		},
		{
			name:      "seed 000: GROUPBY district, empty: every set value is at the minimum",
			condition: constrainttest.GroupBy("district", "shanghai", "shenzhen", "tianjin"),
			fits:      map[string]bool{"a1": true, "a2": true, "a3": false, "a4": true},
		},
		{
			name:      "GROUPBY district after one instance in shenzhen: only the others",
			condition: constrainttest.GroupBy("district", "shanghai", "shenzhen", "tianjin"),
			placed:    []string{"a1"},
			fits:      map[string]bool{"a1": false, "a2": true, "a4": true},
		},
		{
			name:      "seed 000: GROUPBY idc, 3 instances over 2 IDCs end 2+1 never 3+0",
			condition: constrainttest.GroupBy("idc", "sz", "sh"),
			placed:    []string{"a1", "a3"},
			fits:      map[string]bool{"a1": true, "a2": true, "a3": true, "a4": true},
		},
		{
			name:      "GROUPBY idc 2+1: the third instance... and the fourth must go to sh",
			condition: constrainttest.GroupBy("idc", "sz", "sh"),
			placed:    []string{"a1", "a3", "a2"},
			fits:      map[string]bool{"a1": false, "a2": false, "a3": true, "a4": true},
		},
		{
			name:      "GROUPBY ignores set values no agent has",
			condition: constrainttest.GroupBy("idc", "sz", "sh", "gz"),
			placed:    []string{"a1", "a3"},
			fits:      map[string]bool{"a2": true, "a4": true},
		},
		{
			name:      "seed 000: EXCLUDE label appname:gamesvr or appname:dbsvr",
			condition: constrainttest.Exclude("appname:gamesvr", "appname:dbsvr"),
			labels:    map[string][]string{"a1": {"appname:dbsvr"}, "a2": {"appname:websvr"}},
			fits:      map[string]bool{"a1": false, "a2": true, "a3": true},
		},
		{
			name:      "GREATER cpu_gen 3 on a scalar attribute",
			condition: constrainttest.Greater("cpu_gen", 3),
			fits:      map[string]bool{"s4": true, "s3": false, "t9": false, "a1": false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agents := cluster()
			agents = append(agents,
				&constraint.Agent{ID: "s4", Hostname: "s4", Attributes: map[string]constraint.Value{"cpu_gen": constraint.Scalar(4)}},
				&constraint.Agent{ID: "s3", Hostname: "s3", Attributes: map[string]constraint.Value{"cpu_gen": constraint.Scalar(3)}},
				&constraint.Agent{ID: "t9", Hostname: "t9", Attributes: map[string]constraint.Value{"cpu_gen": constraint.Text("9")}},
			)
			state := constrainttest.NewState(agents...)
			for _, id := range tc.placed {
				state.Place(id)
			}
			for id, labels := range tc.labels {
				for _, l := range labels {
					state.RunLabel(id, l)
				}
			}
			c := constrainttest.New().Or(tc.condition).Build()
			for id, want := range tc.fits {
				got, clause := state.Fits(c, id)
				if got != want {
					t.Errorf("agent %s: fits = %v, want %v", id, got, want)
				}
				if !got && clause != 0 {
					t.Errorf("agent %s: failing clause %d, want 0", id, clause)
				}
			}
		})
	}
}

func TestIntersectionIsANDUnionIsOR(t *testing.T) {
	agents := cluster()
	state := constrainttest.NewState(agents...)
	// (idc CLUSTER sz) AND (hostname LIKE slave1 OR district CLUSTER shanghai)
	c := constrainttest.New().
		Cluster("idc", "sz").
		Or(constrainttest.Like("hostname", "slave1"), constrainttest.Cluster("district", "shanghai")).
		Build()
	want := map[string]bool{"a1": true, "a2": true, "a3": false, "a4": false}
	for id, w := range want {
		if got, _ := state.Fits(c, id); got != w {
			t.Errorf("%s: fits = %v, want %v", id, got, w)
		}
	}
	if _, clause := state.Fits(c, "a3"); c.Reason(clause) != "idc CLUSTER" {
		t.Errorf("a3 fails on %q, want idc CLUSTER", c.Reason(clause))
	}
	c2 := constrainttest.New().Cluster("idc", "sz", "sh").
		Or(constrainttest.Like("hostname", "x"), constrainttest.Cluster("district", "y")).Build()
	if _, clause := state.Fits(c2, "a1"); c2.Reason(clause) != "hostname LIKE or district CLUSTER" {
		t.Errorf("reason = %q", c2.Reason(clause))
	}
}

func TestTolerations(t *testing.T) {
	taints := []constraint.Taint{{Key: "maintenance", Value: "true"}, {Key: "gpu", Value: "a100"}}
	cases := []struct {
		name string
		c    *constraint.Compiled
		ok   bool
	}{
		{"no tolerations: a tainted agent is refused", constrainttest.New().Build(), false},
		{"one of two taints tolerated is not enough", constrainttest.New().Tolerate("maintenance", "true").Build(), false},
		{"both taints tolerated", constrainttest.New().Tolerate("maintenance", "true").Tolerate("gpu", "a100").Build(), true},
		{"value must match", constrainttest.New().Tolerate("maintenance", "false").Tolerate("gpu", "a100").Build(), false},
		{"a set tolerates any of its values", constrainttest.New().Tolerate("maintenance", "true").
			Or(constrainttest.Cluster("gpu", "x")).Or(constraint.UnionData{Name: "gpu", Operate: constraint.Toleration,
			Type: constraint.TypeSet, Set: &constraint.SetValue{Item: []string{"v100", "a100"}}}).Build(), true},
		{"no value tolerates every value of the key", constrainttest.New().Tolerate("maintenance", "true").
			Or(constraint.UnionData{Name: "gpu", Operate: constraint.Toleration}).Build(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, left := tc.c.Tolerates(taints)
			if ok != tc.ok {
				t.Fatalf("tolerates = %v (left %v), want %v", ok, left, tc.ok)
			}
		})
	}
	if ok, _ := constrainttest.New().Build().Tolerates(nil); !ok {
		t.Error("an untainted agent must be tolerated by every constraint")
	}
	if ok, _ := constrainttest.New().Build().Tolerates([]constraint.Taint{{Key: "spot", Value: "true", Effect: constraint.PreferNoSchedule}}); !ok {
		t.Error("a PreferNoSchedule taint steers placements, it never refuses one")
	}
	// TOLERATION items do not filter: an item holding only tolerations is dropped.
	c := constrainttest.New().Tolerate("k", "v").Build()
	if c.Clauses() != 0 {
		t.Errorf("clauses = %d, want 0", c.Clauses())
	}
}

// The application reference file's constraint, as JSON, with its spelling.
const referenceConstraint = `{
	"IntersectionItem": [
		{"UnionData": [{"name": "key1", "operate": "TOLERATION", "type": 3, "text": {"value": "value1"}}]},
		{"unionData": [{"name": "label", "operate": "EXCLUDE", "type": 4, "set": {"item": ["appname:gamesvr", "appname:dbsvr"]}}]},
		{"unionData": [{"name": "hostname", "operate": "ClUSTER", "type": 4, "set": {"item": ["slave3", "slave4", "slave5"]}}]},
		{"unionData": [{"name": "idc", "operate": "MAXPER", "type": 3, "text": {"value": "5"}},
			{"unionData": [{"name": "district", "operate": "GROUPBY", "type": 4, "set": {"item": ["shanghai"]}}]}]}
	]
}`

func TestReferenceShapes(t *testing.T) {
	var c constraint.Constraint
	if err := json.Unmarshal([]byte(referenceConstraint), &c); err != nil {
		t.Fatal(err)
	}
	compiled, err := constraint.Compile(&c)
	if err != nil {
		t.Fatal(err)
	}
	// TOLERATION leaves the filters; the nested unionData joins the OR.
	if compiled.Clauses() != 3 {
		t.Fatalf("clauses = %d, want 3", compiled.Clauses())
	}
	if got := compiled.Reason(2); got != "idc MAXPER or district GROUPBY" {
		t.Errorf("nested clause reason = %q", got)
	}
	if got := compiled.Reason(1); got != "hostname CLUSTER" {
		t.Errorf("operator case: reason = %q, want CLUSTER upper-cased", got)
	}
	if ok, _ := compiled.Tolerates([]constraint.Taint{{Key: "key1", Value: "value1"}}); !ok {
		t.Error("key1=value1 must be tolerated")
	}
}

func TestValueFilters(t *testing.T) {
	c := constrainttest.New().Unique("hostname").Cluster("rack", "r1", "r2").
		Or(constrainttest.Cluster("idc", "sz"), constrainttest.GroupBy("idc", "sh")).
		Or(constrainttest.Cluster("idc", "sz"), constrainttest.Like("hostname", "x")).
		Build()
	filters := c.ValueFilters()
	if len(filters) != 2 {
		t.Fatalf("filters = %+v, want rack and idc", filters)
	}
	if f := filters[0]; f.Clause != 1 || f.Name != "rack" || len(f.Values) != 2 {
		t.Errorf("filter 0 = %+v", f)
	}
	if f := filters[1]; f.Clause != 2 || f.Name != "idc" || len(f.Values) != 2 {
		t.Errorf("filter 1 = %+v", f)
	}
	if names := c.CountedNames(); len(names) != 2 || names[0] != "hostname" || names[1] != "idc" {
		t.Errorf("counted names = %v", names)
	}
}

func TestValueString(t *testing.T) {
	cases := map[string]constraint.Value{
		"sz":        constraint.Text("sz"),
		"2.5":       constraint.Scalar(2.5),
		"8":         constraint.Scalar(8),
		"{a,b}":     constraint.Set("b", "a"),
		"[1-2,5-9]": constraint.Ranges(constraint.Range{Begin: 1, End: 2}, constraint.Range{Begin: 5, End: 9}),
	}
	for want, v := range cases {
		if got := v.String(); got != want {
			t.Errorf("%+v: String() = %q, want %q", v, got, want)
		}
	}
}

// A pattern that makes a backtracking engine take exponential time is
// matched by Go's RE2 engine in time linear in the value: this benchmark
// grows the value 16-fold between its sizes and the time per match grows
// as much, not exponentially.
func BenchmarkLikeBacktrackingPattern(b *testing.B) {
	for _, n := range []int{1 << 8, 1 << 12, 1 << 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			state := constrainttest.NewState(agent("a1", strings.Repeat("a", n)+"!"))
			c := constrainttest.New().Or(constrainttest.Like("hostname", "((a+)+)+b")).Build()
			for b.Loop() {
				if fits, _ := state.Fits(c, "a1"); fits {
					b.Fatal("((a+)+)+b matched a value without b")
				}
			}
		})
	}
}

// A toleration with an effect tolerates taints of that effect only; one
// without tolerates every effect (Kubernetes' toleration.effect).
func TestTolerationEffects(t *testing.T) {
	taint := func(effect constraint.TaintEffect) constraint.Taint {
		return constraint.Taint{Key: "spot", Value: "true", Effect: effect}
	}
	cases := []struct {
		name  string
		c     *constraint.Compiled
		taint constraint.Taint
		want  bool
	}{
		{"no effect tolerates NoSchedule", constrainttest.New().Tolerate("spot", "true").Build(), taint(constraint.NoSchedule), true},
		{"no effect tolerates NoExecute", constrainttest.New().Tolerate("spot", "true").Build(), taint(constraint.NoExecute), true},
		{"a stored taint without effect is NoSchedule", constrainttest.New().Or(constrainttest.TolerateEffect("spot", "true", constraint.NoSchedule)).Build(), taint(""), true},
		{"PreferNoSchedule does not tolerate NoSchedule", constrainttest.New().Or(constrainttest.TolerateEffect("spot", "true", constraint.PreferNoSchedule)).Build(), taint(constraint.NoSchedule), false},
		{"PreferNoSchedule tolerates PreferNoSchedule", constrainttest.New().Or(constrainttest.TolerateEffect("spot", "true", constraint.PreferNoSchedule)).Build(), taint(constraint.PreferNoSchedule), true},
		{"the value still has to match", constrainttest.New().Or(constrainttest.TolerateEffect("spot", "false", constraint.NoExecute)).Build(), taint(constraint.NoExecute), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.ToleratesTaint(tc.taint); got != tc.want {
				t.Fatalf("tolerates %v = %v, want %v", tc.taint, got, tc.want)
			}
		})
	}
}

// Preferred items never filter; Preference sums the weights of those met.
func TestPreference(t *testing.T) {
	a1 := &constraint.Agent{ID: "a1", Hostname: "h1", Attributes: map[string]constraint.Value{"idc": constraint.Text("sz"), "disk": constraint.Text("ssd")}}
	a2 := &constraint.Agent{ID: "a2", Hostname: "h2", Attributes: map[string]constraint.Value{"idc": constraint.Text("sh"), "disk": constraint.Text("ssd")}}
	a3 := &constraint.Agent{ID: "a3", Hostname: "h3", Attributes: map[string]constraint.Value{"idc": constraint.Text("gz")}}
	state := constrainttest.NewState(a1, a2, a3)
	c := constrainttest.New().Prefer(60, constrainttest.Cluster("idc", "sz")).Prefer(30, constrainttest.Cluster("disk", "ssd")).Build()
	if c.Clauses() != 0 {
		t.Errorf("clauses = %d: preferred items must not filter", c.Clauses())
	}
	for id, want := range map[string]int{"a1": 90, "a2": 30, "a3": 0} {
		if ok, _ := state.Fits(c, id); !ok {
			t.Errorf("%s does not fit: a preferred item refused it", id)
		}
		if got := state.Preference(c, id); got != want {
			t.Errorf("preference of %s = %d, want %d", id, got, want)
		}
	}
}

// NoExecute (Kubernetes' taint manager): untolerated, an instance leaves
// when the taint is set; tolerated with seconds, that long after (the
// shortest of the matching tolerations); tolerated without, never.
func TestEviction(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	noExecute := constraint.Taint{Key: "kernel", Value: "old", Effect: constraint.NoExecute, Since: since}
	later := constraint.Taint{Key: "disk", Value: "bad", Effect: constraint.NoExecute, Since: since.Add(time.Minute)}
	noSchedule := constraint.Taint{Key: "kernel", Value: "old"}
	cases := []struct {
		name   string
		c      *constraint.Compiled
		taints []constraint.Taint
		at     time.Time
		evict  bool
	}{
		{"no constraint: at once", nil, []constraint.Taint{noExecute}, since, true},
		{"NoSchedule never evicts", nil, []constraint.Taint{noSchedule}, time.Time{}, false},
		{"tolerated for good", constrainttest.New().Tolerate("kernel", "old").Build(), []constraint.Taint{noExecute}, time.Time{}, false},
		{"tolerated for 30s", constrainttest.New().Or(constrainttest.TolerateFor("kernel", "old", 30)).Build(), []constraint.Taint{noExecute}, since.Add(30 * time.Second), true},
		{"the shortest matching seconds", constrainttest.New().Or(constrainttest.TolerateFor("kernel", "old", 30)).
			Or(constrainttest.TolerateFor("kernel", "old", 10)).Or(constrainttest.Tolerate("kernel", "old")).Build(), []constraint.Taint{noExecute}, since.Add(10 * time.Second), true},
		{"a PreferNoSchedule toleration does not tolerate NoExecute", constrainttest.New().Or(constrainttest.TolerateEffect("kernel", "old", constraint.PreferNoSchedule)).Build(),
			[]constraint.Taint{noExecute}, since, true},
		{"the earliest of two taints", constrainttest.New().Or(constrainttest.TolerateFor("kernel", "old", 300)).Build(), []constraint.Taint{noExecute, later}, since.Add(time.Minute), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at, evict := tc.c.Eviction(tc.taints)
			if !at.Equal(tc.at) || evict != tc.evict {
				t.Fatalf("eviction = %v, %v; want %v, %v", at, evict, tc.at, tc.evict)
			}
		})
	}
}
