package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Each namespace's instances run on the agents as the namespace's own
// user (proto.Identity, pkg/identity). The identity is recorded in etcd
// the first time a namespace needs one; the driver asks its
// IdentitySource for the namespace of every application it hands the
// core, before the application, and feeds the answer as data
// (NamespaceIdentity): launches and in-place updates carry it, and the
// core does no I/O for it. With Config.Identities, a namespace without
// one (its range is full, say) keeps its instances waiting, saying why,
// until it gets one.

// IdentitySource gives each namespace its identity on the agents.
type IdentitySource interface {
	Identity(ctx context.Context, namespace string) (*proto.Identity, error)
}

// NamespaceIdentity: the driver got a namespace's identity, or could not
// (Problem says why; it retries).
type NamespaceIdentity struct {
	Namespace string
	Identity  *proto.Identity
	Problem   string
}

func (NamespaceIdentity) input() {}

// missingIdentity is why an instance cannot launch: its namespace has no
// identity on the agents (yet).
type missingIdentity struct {
	namespace, problem string
}

func (m *missingIdentity) Error() string {
	msg := fmt.Sprintf("the uid of namespace %q on the agents", m.namespace)
	if m.problem != "" {
		msg += ": " + m.problem
	}
	return msg
}

// ref is what an instance waiting for it records in WaitingFor.
func (m *missingIdentity) ref() string { return identityRef(m.namespace) }

func identityRef(namespace string) string { return "the uid of namespace " + namespace }

// identity is what the launches of namespace carry: nil when namespaces
// get none, an error when they do and this one has none.
func (c *Core) identity(namespace string) (*proto.Identity, error) {
	if !c.cfg.Identities {
		return nil, nil
	}
	if id := c.identities[namespace]; id != nil {
		return id, nil
	}
	return nil, &missingIdentity{namespace: namespace, problem: c.identityProblems[namespace]}
}

// namespaceIdentity takes a namespace's identity, or why it has none:
// its instances waiting for it launch again, or say why they wait.
func (c *Core) namespaceIdentity(in NamespaceIdentity) {
	ref := identityRef(in.Namespace)
	if in.Identity == nil {
		c.identityProblems[in.Namespace] = in.Problem
		msg := "waiting for " + (&missingIdentity{namespace: in.Namespace, problem: in.Problem}).Error()
		c.eachWaitingFor(in.Namespace, ref, func(inst *instance) {
			inst.rec.Message = msg
			c.persist(inst)
		})
		return
	}
	delete(c.identityProblems, in.Namespace)
	c.identities[in.Namespace] = in.Identity
	c.eachWaitingFor(in.Namespace, ref, func(inst *instance) { c.stopWaiting(inst, "the namespace has its uid") })
}

// eachWaitingFor calls fn for each instance of namespace waiting for ref.
func (c *Core) eachWaitingFor(namespace, ref string, fn func(*instance)) {
	for _, a := range c.sortedApps() {
		if a.rec.Namespace != namespace {
			continue
		}
		for _, inst := range a.sortedInstances() {
			if inst.rec.WaitingFor == ref {
				fn(inst)
			}
		}
	}
}

// The driver's side: identities asked for before the applications that
// need them reach the core, and asked again while they cannot be had.

// namespaceIdentities asks for the identities of namespaces at Restore;
// it returns those it got, and an input for each it did not (to step
// after Restore; they are retried).
func (d *Driver) namespaceIdentities(ctx context.Context, namespaces []string) (map[string]*proto.Identity, []Input) {
	got := map[string]*proto.Identity{}
	var failed []Input
	seen := map[string]bool{}
	for _, ns := range namespaces {
		if seen[ns] {
			continue
		}
		seen[ns] = true
		in, ok := d.askIdentity(ctx, ns).(NamespaceIdentity)
		switch {
		case !ok:
		case in.Identity != nil:
			got[ns] = in.Identity
		default:
			failed = append(failed, in)
		}
	}
	return got, failed
}

// ensureIdentity steps namespace's identity into the core unless it has
// it already or it cannot be had now and the core was told so.
func (d *Driver) ensureIdentity(ctx context.Context, namespace string) error {
	if d.cfg.Identities == nil || d.identityKnown[namespace] {
		return nil
	}
	if _, failing := d.identityFailed[namespace]; failing {
		return nil // retried on ticks
	}
	if in := d.askIdentity(ctx, namespace); in != nil {
		return d.step(ctx, in)
	}
	return nil
}

// retryIdentities asks again for the identities that could not be had,
// once BackoffMax has passed since the last try.
func (d *Driver) retryIdentities(ctx context.Context) error {
	now := d.cfg.Clock.Now()
	for ns, failed := range d.identityFailed {
		if now.Sub(failed.at) < d.cfg.BackoffMax {
			continue
		}
		if in := d.askIdentity(ctx, ns); in != nil {
			if err := d.step(ctx, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// identityFailure is a namespace whose identity could not be had.
type identityFailure struct {
	problem string
	at      time.Time
}

// askIdentity asks the source for namespace's identity and returns the
// input that tells the core: the identity, or a problem it was not told
// yet (nil when it was, or the driver stops).
func (d *Driver) askIdentity(ctx context.Context, namespace string) Input {
	id, err := d.cfg.Identities.Identity(ctx, namespace)
	if err == nil {
		delete(d.identityFailed, namespace)
		d.identityKnown[namespace] = true
		return NamespaceIdentity{Namespace: namespace, Identity: id}
	}
	if ctx.Err() != nil {
		return nil
	}
	prev, told := d.identityFailed[namespace]
	d.identityFailed[namespace] = identityFailure{problem: err.Error(), at: d.cfg.Clock.Now()}
	if told && prev.problem == err.Error() {
		return nil
	}
	d.log.Warn("namespace has no identity on the agents; its instances wait", "namespace", namespace, "retry", d.cfg.BackoffMax, "err", err)
	return NamespaceIdentity{Namespace: namespace, Problem: err.Error()}
}
