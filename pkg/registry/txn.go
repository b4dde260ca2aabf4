package registry

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Txn collects writes of the scheduler's own records (written
// unconditionally: it is their only writer) to store them in order in as
// few store transactions as etcd allows (store.Batch): the scheduler
// stores a step's records in one round trip or a few, not one each.
// Writes that read before they write (applications, agents) are not
// here: they go through the Registry's methods, after a Commit of what
// came before them. A Txn is committed once.
type Txn struct {
	r     *Registry
	batch *store.Batch
	units []txnUnit // by store.Batch unit index
}

// txnUnit is one write of a Txn: what names it in errors, rec (nil for a
// deletion) gets the revision it was stored at.
type txnUnit struct {
	what string
	rec  ownRecord
}

// Txn returns an empty transaction builder on r's store (fenced when r
// is OnStore a fenced view).
func (r *Registry) Txn() *Txn { return &Txn{r: r, batch: r.store.Batch()} }

// Len is the number of writes added.
func (t *Txn) Len() int { return len(t.units) }

// Transactions is the number of store transactions Commit makes.
func (t *Txn) Transactions() int { return t.batch.Transactions() }

// Commit stores the writes in the order they were added and sets the
// revision of each record written. On error the writes of the
// transactions before the failing one are stored, the others not.
func (t *Txn) Commit(ctx context.Context) error {
	revs, err := t.batch.Commit(ctx)
	for i, rev := range revs {
		if rec := t.units[i].rec; rec != nil {
			rec.setRevision(rev)
		}
	}
	switch {
	case err == nil:
		return nil
	case len(t.units) == 1:
		return fmt.Errorf("%s: %w", t.units[0].what, err)
	}
	return fmt.Errorf("%d writes from %s: %w", len(t.units), t.units[0].what, err)
}

// put adds the write of rec at key, stamped with the time of the write,
// and with it, in the same store transaction, the extra ops.
func (t *Txn) put(key string, rec ownRecord, what string, extra ...store.Op) error {
	rec.setUpdatedAt(t.r.now().UTC())
	value, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	t.batch.Add(append([]store.Op{store.PutOp(key, value)}, extra...)...)
	t.units = append(t.units, txnUnit{what: what, rec: rec})
	return nil
}

// remove adds the deletion of the record at key; a missing one is fine.
func (t *Txn) remove(key, what string) {
	t.batch.Add(store.RemoveOp(key))
	t.units = append(t.units, txnUnit{what: what})
}

// PutTaskGroup adds the write of an instance's runtime state and, in the
// same store transaction, of the notices its change made: a notice is
// stored exactly when the change is.
func (t *Txn) PutTaskGroup(tg *TaskGroup, notices ...Notice) error {
	key, err := TaskGroupKey(tg.Namespace, tg.App, tg.Index)
	if err != nil {
		return err
	}
	ops := make([]store.Op, 0, len(notices))
	for _, n := range notices {
		nkey, err := NotificationKey(n.ID)
		if err != nil {
			return err
		}
		value, err := json.Marshal(Notification{Notice: n, Deliveries: []Delivery{}})
		if err != nil {
			return err
		}
		ops = append(ops, store.CreateOp(nkey, value))
	}
	what := fmt.Sprintf("task group %s/%s/%d", tg.Namespace, tg.App, tg.Index)
	if len(notices) > 0 {
		what += " and its notices"
	}
	return t.put(key, tg, what, ops...)
}

// DeleteTaskGroup adds the removal of an instance's record; a missing
// one is fine.
func (t *Txn) DeleteTaskGroup(namespace, app string, index int) error {
	key, err := TaskGroupKey(namespace, app, index)
	if err != nil {
		return err
	}
	t.remove(key, fmt.Sprintf("task group %s/%s/%d", namespace, app, index))
	return nil
}

// SetFrameworkID adds the write of the framework ID, so that every later
// subscription fails over to the same framework.
func (t *Txn) SetFrameworkID(id string) {
	t.batch.Add(store.PutOp(store.FrameworkIDKey, []byte(id)))
	t.units = append(t.units, txnUnit{what: "framework ID"})
}

// PutSweep adds the write of the sweep owed an agent.
func (t *Txn) PutSweep(s *Sweep) error {
	key, err := store.Key(store.KindSweep, s.AgentID)
	if err != nil {
		return err
	}
	return t.put(key, s, "sweep of agent "+s.AgentID)
}

// DeleteSweep adds the removal of the sweep of an agent; a missing one
// is fine.
func (t *Txn) DeleteSweep(agentID string) error {
	key, err := store.Key(store.KindSweep, agentID)
	if err != nil {
		return err
	}
	t.remove(key, "sweep of agent "+agentID)
	return nil
}

// PutRollout adds the write of an application's rollout.
func (t *Txn) PutRollout(ro *Rollout) error {
	key, err := store.Key(store.KindRollout, ro.Namespace, ro.Name)
	if err != nil {
		return err
	}
	return t.put(key, ro, fmt.Sprintf("rollout of %s/%s", ro.Namespace, ro.Name))
}

// DeleteRollout adds the removal of an application's rollout; a missing
// one is fine.
func (t *Txn) DeleteRollout(namespace, name string) error {
	key, err := store.Key(store.KindRollout, namespace, name)
	if err != nil {
		return err
	}
	t.remove(key, fmt.Sprintf("rollout of %s/%s", namespace, name))
	return nil
}

// DeleteHookRun adds the removal of a hook run; a missing one is fine.
func (t *Txn) DeleteHookRun(namespace, name string) error {
	key, err := store.Key(store.KindHookRun, namespace, name)
	if err != nil {
		return err
	}
	t.remove(key, fmt.Sprintf("hook run %s/%s", namespace, name))
	return nil
}

// commitOne commits a Txn of the one write add adds: the Registry's
// methods for the same writes.
func (r *Registry) commitOne(ctx context.Context, add func(*Txn) error) error {
	t := r.Txn()
	if err := add(t); err != nil {
		return err
	}
	return t.Commit(ctx)
}
