package scheduler

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Dependency pods (seed 002's dependsController). An
// application names depends objects in its pod template; wherever one of
// its instances is live, the depends object's pod must run on the same
// agent: one per agent (policy node) or one per agent and namespace of
// the instances (policy namespace), shared by every such instance there.
//
// A dependency pod is an ordinary deployment of one instance, constrained
// to its agent's hostname and marked registry.DependencyPod. The core asks
// the driver to create, update or delete it (Write.DependencyPod,
// Write.DeleteDependencyPod) and learns the result like any application,
// through AppChanged: launching, restarts, status and the API's views are
// the ordinary ones, and a new spec of the depends object is a new
// version rolled out in place.
//
// Its users — the live referencing instances on its agent — are counted
// afresh every step, never stored as the truth (the record shows them).
// A pod without users is deleted DependsGCDelay after the last one left;
// a user coming back before then keeps it. The countdown lives in memory:
// after a restart it begins again at the restore, so a pod never goes
// sooner than the delay after its last user left.
type dependsState struct {
	// idle are the pods without users.
	idle map[AppRef]idleSpan
	// asked is the record last asked of the driver per pod (nil: its
	// deletion) until the store shows it, so a step does not ask again
	// what the echo has not brought back yet.
	asked map[AppRef]*registry.App
	// specs caches each pod's manifest for the depends object it was made
	// from: a new object (a PUT) makes them again.
	specs map[AppRef]podSpec
	// names caches the pods' applications (DependencyPod.App) by what
	// they stand for, as of the last step.
	names map[registry.DependencyPod]AppRef
}

// idleSpan is how long a pod has been without users: since the last one
// left (as its record says after a restart), counted from countFrom.
type idleSpan struct{ since, countFrom time.Time }

type podSpec struct {
	from *manifest.Depends
	json []byte
}

func newDependsState() dependsState {
	return dependsState{idle: map[AppRef]idleSpan{}, asked: map[AppRef]*registry.App{}, specs: map[AppRef]podSpec{}}
}

// DefaultDependsGCDelay is seed 002's garbage collection time of an
// unused dependency pod ("目前设定的垃圾回收时间为5m").
const DefaultDependsGCDelay = 5 * time.Minute

// dependencyPod is one pod the users want, or one that exists.
type dependencyPod struct {
	ref   AppRef
	state registry.DependencyPod
	app   *app // the stored application; nil until created
}

func (p *dependencyPod) String() string { return p.ref.Namespace + "/" + p.ref.Name }

// followsUsers reports whether a is a dependency pod: it is bound to its
// agent and goes when its users leave, so drains and drifts leave it be.
func (a *app) followsUsers() bool { return a.rec.DependencyPod != nil }

// reconcileDepends brings the dependency pods to their users: creates
// the missing, updates the changed, deletes the unused after the delay
// and those whose depends object is gone.
func (c *Core) reconcileDepends() {
	if !c.acting() {
		return // maintenance: nothing starts or stops until it ends
	}
	pods := c.wantedDependencyPods()
	for _, a := range c.apps {
		if dp := a.rec.DependencyPod; dp != nil {
			ref := AppRef{a.rec.Namespace, a.rec.Name}
			p := pods[ref]
			if p == nil {
				p = &dependencyPod{ref: ref, state: *dp}
				p.state.Users = 0
				pods[ref] = p
			}
			p.app = a
		}
	}
	for _, ref := range slices.SortedFunc(maps.Keys(pods), func(x, y AppRef) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	}) {
		c.reconcileDependencyPod(pods[ref])
	}
	for key := range c.deps.asked {
		if pods[key] == nil {
			delete(c.deps.asked, key) // deleted and gone
		}
	}
	for key := range c.deps.specs {
		if pods[key] == nil {
			delete(c.deps.specs, key)
		}
	}
}

// wantedDependencyPods counts the users of every pod the live instances
// of referencing applications want, by pod key.
func (c *Core) wantedDependencyPods() map[AppRef]*dependencyPod {
	pods := make(map[AppRef]*dependencyPod, len(c.deps.names))
	names := make(map[registry.DependencyPod]AppRef, len(c.deps.names))
	for _, a := range c.apps {
		if a.tmpl == nil || len(a.tmpl.Depends) == 0 || a.rec.DependencyPod != nil {
			continue
		}
		// Counted per agent first: a pod is named once per agent, not
		// once per instance.
		users := map[string]int{}
		for _, inst := range a.instances {
			for _, l := range [...]*instance{inst, inst.successor} { // a move's launch uses its agent's pods too
				if l != nil && l.phase().live() && l.rec.Host != "" {
					users[l.rec.Host]++
				}
			}
		}
		for host, n := range users {
			for _, ref := range a.tmpl.Depends {
				state := registry.DependencyPod{DependsNamespace: ref.Namespace, DependsName: ref.Name, Node: host, Policy: ref.Policy}
				if ref.Policy == manifest.DependsPerNamespace {
					state.ServedNamespace = a.rec.Namespace
				}
				ref, ok := c.deps.names[state]
				if !ok {
					ref.Namespace, ref.Name = state.App()
				}
				names[state] = ref
				p := pods[ref]
				if p == nil {
					p = &dependencyPod{ref: ref, state: state}
					pods[ref] = p
				}
				p.state.Users += n
			}
		}
	}
	c.deps.names = names
	return pods
}

func (c *Core) reconcileDependencyPod(p *dependencyPod) {
	key := p.ref
	asked, pending := c.deps.asked[key]
	switch {
	case p.app != nil && p.app.rec.State == registry.AppDeleting:
		delete(c.deps.asked, key) // going: a user back in time gets a new one
		delete(c.deps.idle, key)
		return
	case p.app != nil && pending && asked == nil:
		return // its deletion is on its way
	}
	d := c.refs.depends[p.state.Depends()]
	if d == nil {
		if p.app != nil {
			c.logf("dependency pod deleted: its depends object is gone", "pod", p, "depends", p.state.Depends())
			c.deleteDependencyPod(p)
		}
		return
	}
	if p.state.Users > 0 {
		delete(c.deps.idle, key)
	} else { // only a stored pod lacks users
		span, counting := c.deps.idle[key]
		if !counting {
			span = idleSpan{since: c.now, countFrom: c.now}
			if stored := p.app.rec.DependencyPod.IdleSince; !stored.IsZero() {
				span.since = stored // idle before a restart: the countdown begins again
			}
			c.deps.idle[key] = span
		}
		if !c.now.Before(span.countFrom.Add(c.cfg.DependsGCDelay)) {
			c.logf("dependency pod deleted: unused", "pod", p, "idle", c.now.Sub(span.since), "delay", c.cfg.DependsGCDelay)
			c.deleteDependencyPod(p)
			return
		}
		p.state.IdleSince = span.since
	}
	spec, err := c.dependencyPodSpec(p, d)
	if err != nil {
		c.logf("dependency pod not made", "pod", p, "err", err)
		return
	}
	if p.app != nil && bytes.Equal(p.app.rec.Spec, spec) && p.app.rec.DependencyPod.Equal(p.state) {
		delete(c.deps.asked, key)
		return
	}
	if asked != nil && bytes.Equal(asked.Spec, spec) && asked.DependencyPod.Equal(p.state) {
		return
	}
	if p.app == nil {
		c.logf("dependency pod wanted", "pod", p, "depends", p.state.Depends(), "node", p.state.Node, "users", p.state.Users)
	}
	want := &registry.App{Namespace: p.ref.Namespace, Name: p.ref.Name, Kind: manifest.KindDeployment, Instances: 1, Spec: spec,
		DependencyPod: &p.state}
	c.deps.asked[key] = want
	c.write(Write{DependencyPod: want})
}

func (c *Core) deleteDependencyPod(p *dependencyPod) {
	delete(c.deps.idle, p.ref)
	c.deps.asked[p.ref] = nil
	ref := p.ref
	c.write(Write{DeleteDependencyPod: &ref})
}

// dependencyPodSpec is the stored manifest of a pod: the depends
// object's deployment on the pod's node.
func (c *Core) dependencyPodSpec(p *dependencyPod, d *manifest.Depends) ([]byte, error) {
	key := p.ref
	if cached, ok := c.deps.specs[key]; ok && cached.from == d {
		return cached.json, nil
	}
	meta := manifest.ObjectMeta{Name: p.ref.Name, Namespace: p.ref.Namespace, Labels: d.Metadata.Labels}
	spec, err := json.Marshal(d.Pod(meta, p.state.Node))
	if err != nil {
		return nil, err
	}
	c.deps.specs[key] = podSpec{from: d, json: spec}
	return spec, nil
}
