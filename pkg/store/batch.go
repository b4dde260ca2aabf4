package store

import (
	"context"
	"fmt"
)

// etcd's default limits on one transaction: --max-txn-ops counts the
// comparisons, the writes and the reads of the else branch each, and
// --max-request-bytes is 1.5 MiB. A batch's transactions stay within
// both, one op and its comparison kept for the fence, and a quarter of
// the bytes for sealing, protobuf framing and key prefixes.
const (
	maxTxnOps   = 128 - 1
	maxTxnBytes = 1 << 20
)

// Batch is a sequence of writes applied in order, in as few transactions
// as etcd's limits allow: one store round trip for a step's worth of
// records instead of one each. Each Add is a unit kept within one
// transaction (a record and the records that must be stored exactly when
// it is); a unit that writes a key an earlier unit of the transaction
// writes starts a new one, so that a later write of a key wins. Build it
// with Store.Batch; a batch of a view WithFence is fenced as its Apply is.
type Batch struct {
	store *Store
	txns  []batchTxn
	units int
}

type batchTxn struct {
	ops   []Op
	keys  map[string]bool
	bytes int
	units int
}

// Batch returns an empty batch writing to s.
func (s *Store) Batch() *Batch { return &Batch{store: s} }

// Add appends one unit of ops, applied atomically and after every unit
// added before it. It returns the unit's index in Commit's revisions.
func (b *Batch) Add(ops ...Op) int {
	var bytes int
	for _, op := range ops {
		bytes += len(op.key) + len(op.value)
	}
	if len(b.txns) == 0 || !b.fits(&b.txns[len(b.txns)-1], ops, bytes) {
		b.txns = append(b.txns, batchTxn{keys: make(map[string]bool)})
	}
	t := &b.txns[len(b.txns)-1]
	t.ops = append(t.ops, ops...)
	for _, op := range ops {
		t.keys[op.key] = true
	}
	t.bytes += bytes
	t.units++
	b.units++
	return b.units - 1
}

// fits tells whether a unit of ops can join transaction t. A unit too
// big for any transaction gets one of its own, which etcd refuses as it
// would refuse the unit alone.
func (b *Batch) fits(t *batchTxn, ops []Op, bytes int) bool {
	if len(t.ops)+len(ops) > maxTxnOps || t.bytes+bytes > maxTxnBytes {
		return false
	}
	for _, op := range ops {
		if t.keys[op.key] {
			return false
		}
	}
	return true
}

// Len is the number of units added.
func (b *Batch) Len() int { return b.units }

// Transactions is the number of transactions Commit makes.
func (b *Batch) Transactions() int { return len(b.txns) }

// Commit applies the batch's transactions one after the other and
// returns the revision each unit was written at, by index. It stops at
// the first that fails and returns its error (Apply's): the transactions
// before it are written, it and those after are not.
func (b *Batch) Commit(ctx context.Context) ([]int64, error) {
	revs := make([]int64, 0, b.units)
	for i, t := range b.txns {
		rev, err := b.store.Apply(ctx, t.ops...)
		if err != nil {
			if len(b.txns) > 1 {
				err = fmt.Errorf("transaction %d of %d: %w", i+1, len(b.txns), err)
			}
			return revs, err
		}
		for range t.units {
			revs = append(revs, rev)
		}
	}
	return revs, nil
}
