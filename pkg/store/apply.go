package store

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

type opKind int

const (
	opCreate opKind = iota + 1
	opUpdate
	opDelete
	opPut
	opRemove
	opCheck
	opAbsent
)

func (k opKind) String() string {
	switch k {
	case opCreate:
		return "create"
	case opUpdate:
		return "update"
	case opDelete:
		return "delete"
	case opPut:
		return "put"
	case opRemove:
		return "remove"
	case opCheck:
		return "check"
	case opAbsent:
		return "absent"
	}
	return "unknown op"
}

// Op is one write, or one compare, in an atomic Apply. Build it with
// CreateOp, UpdateOp, DeleteOp, PutOp, RemoveOp, CheckOp or AbsentOp.
type Op struct {
	kind      opKind
	key       string
	value     []byte
	expectRev int64
}

// CreateOp writes key only if it does not exist.
func CreateOp(key string, value []byte) Op { return Op{kind: opCreate, key: key, value: value} }

// UpdateOp overwrites key only if its revision is still expectRev (> 0).
func UpdateOp(key string, value []byte, expectRev int64) Op {
	return Op{kind: opUpdate, key: key, value: value, expectRev: expectRev}
}

// DeleteOp removes key if its revision is still expectRev, or whatever its
// revision when expectRev is 0; the key must exist either way.
func DeleteOp(key string, expectRev int64) Op {
	return Op{kind: opDelete, key: key, expectRev: expectRev}
}

// PutOp writes key unconditionally; see Store.Put.
func PutOp(key string, value []byte) Op { return Op{kind: opPut, key: key, value: value} }

// RemoveOp deletes key if it exists, unconditionally: a missing key is
// fine. Like PutOp, it is for keys with a single writer.
func RemoveOp(key string) Op { return Op{kind: opRemove, key: key} }

// CheckOp writes nothing: the Apply commits only if key's revision is
// still expectRev (> 0), so other writes can depend on a record as read
// without rewriting it.
func CheckOp(key string, expectRev int64) Op {
	return Op{kind: opCheck, key: key, expectRev: expectRev}
}

// AbsentOp writes nothing: the Apply commits only if key does not exist.
func AbsentOp(key string) Op { return Op{kind: opAbsent, key: key} }

// Key is the key the op writes or compares.
func (o Op) Key() string { return o.key }

func (o Op) String() string { return fmt.Sprintf("%s %q", o.kind, o.key) }

// Apply performs ops atomically in one etcd transaction: either every op's
// precondition holds and all are written at one new revision (returned),
// or nothing is written and the error is the first failing op's:
// errdefs.ErrAlreadyExists, errdefs.ErrNotFound or errdefs.ErrConflict.
// A key may appear in at most one op; etcd limits a transaction to 128 ops
// by default. On a view WithFence, the fence is one more precondition,
// checked first: ErrDeposed when it fails.
func (s *Store) Apply(ctx context.Context, ops ...Op) (int64, error) {
	if len(ops) == 0 {
		return 0, fmt.Errorf("apply: no ops: %w", errdefs.ErrInvalidArgument)
	}
	var (
		cmps       []clientv3.Cmp
		thens      []clientv3.Op
		elses      []clientv3.Op
		seen       = make(map[string]bool, len(ops))
		conditions []int // index into ops of each op with a precondition
	)
	if s.fence != nil {
		cmps = append(cmps, s.fence.cmp())
		elses = append(elses, clientv3.OpGet(s.fence.key, clientv3.WithKeysOnly()))
	}
	for i, op := range ops {
		if err := s.checkOp(op); err != nil {
			return 0, opError(ops, i, err)
		}
		if seen[op.key] {
			return 0, opError(ops, i, fmt.Errorf("%s: key appears twice in one apply: %w", op, errdefs.ErrInvalidArgument))
		}
		seen[op.key] = true
		full := s.prefix + op.key
		switch op.kind {
		case opCreate, opAbsent:
			cmps = append(cmps, clientv3.Compare(clientv3.Version(full), "=", 0))
		case opUpdate, opCheck:
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(full), "=", op.expectRev))
		case opDelete:
			if op.expectRev > 0 {
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(full), "=", op.expectRev))
			} else {
				cmps = append(cmps, clientv3.Compare(clientv3.Version(full), ">", 0))
			}
		}
		if op.kind != opPut && op.kind != opRemove {
			conditions = append(conditions, i)
			elses = append(elses, clientv3.OpGet(full, clientv3.WithKeysOnly()))
		}
		switch op.kind {
		case opCheck, opAbsent:
			continue
		case opDelete, opRemove:
			thens = append(thens, clientv3.OpDelete(full))
			continue
		}
		value, err := s.encode(op.key, op.value)
		if err != nil {
			return 0, opError(ops, i, err)
		}
		thens = append(thens, clientv3.OpPut(full, string(value)))
	}

	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Txn(rctx).If(cmps...).Then(thens...).Else(elses...).Commit()
	if err != nil {
		return 0, classify(ctx, describe(ops), err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	// The else branch read the leader key of the fence, if any, and every
	// conditioned key at the same revision the comparison failed at: find
	// the first precondition that is false.
	reads := resp.Responses
	if s.fence != nil {
		if !s.fence.holds(resp) {
			return 0, s.fence.refuse(ops)
		}
		reads = reads[1:]
	}
	for j, i := range conditions {
		var current int64 // mod revision; 0 when the key is missing
		if kvs := reads[j].GetResponseRange().GetKvs(); len(kvs) > 0 {
			current = kvs[0].ModRevision
		}
		if err := preconditionError(ops, i, current); err != nil {
			return 0, err
		}
	}
	// Unreachable unless a key changed between compare and read, which etcd
	// transactions rule out; still, never report success.
	return 0, fmt.Errorf("%s: precondition failed: %w", describe(ops), errdefs.ErrConflict)
}

func (s *Store) checkOp(op Op) error {
	if err := validateKey(op.key); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch op.kind {
	case opCreate, opPut, opRemove, opAbsent:
	case opUpdate, opCheck:
		if op.expectRev <= 0 {
			return fmt.Errorf("%s: expected revision must be > 0, got %d: %w", op, op.expectRev, errdefs.ErrInvalidArgument)
		}
	case opDelete:
		if op.expectRev < 0 {
			return fmt.Errorf("%s: expected revision must be ≥ 0, got %d: %w", op, op.expectRev, errdefs.ErrInvalidArgument)
		}
	default:
		return fmt.Errorf("op on key %q was not built with CreateOp, UpdateOp, DeleteOp, PutOp, RemoveOp, CheckOp or AbsentOp: %w", op.key, errdefs.ErrInvalidArgument)
	}
	return nil
}

// PreconditionError is a write Apply refused because its key was not as
// the op expected: there already (errdefs.ErrAlreadyExists), missing
// (errdefs.ErrNotFound) or written since the revision it expected
// (errdefs.ErrConflict). Its text names the key and the revisions, for
// the server's log; a client is told in its own terms what changed.
type PreconditionError struct {
	Op  string // "create", "update", "delete", "check" or "absent"
	Key string
	// Expected is the mod revision the op expected (0: any, or none for
	// a create); Current the key's (0: missing).
	Expected, Current int64
	// Index counts the op among the Of ops of its Apply, from 1.
	Index, Of int
	class     error
}

func (e *PreconditionError) Error() string {
	var what string
	switch e.class {
	case errdefs.ErrAlreadyExists:
		what = fmt.Sprintf("exists at revision %d", e.Current)
	case errdefs.ErrConflict:
		what = fmt.Sprintf("expected revision %d, current is %d", e.Expected, e.Current)
	}
	s := fmt.Sprintf("%s %q", e.Op, e.Key)
	if what != "" {
		s += ": " + what
	}
	s += ": " + e.class.Error()
	if e.Of > 1 {
		s = fmt.Sprintf("apply op %d of %d: %s", e.Index, e.Of, s)
	}
	return s
}

// Unwrap returns the error's class.
func (e *PreconditionError) Unwrap() error { return e.class }

// preconditionError explains why ops[i] cannot apply to a key whose
// current mod revision is current (0: missing), or returns nil if it can.
func preconditionError(ops []Op, i int, current int64) error {
	op := ops[i]
	e := &PreconditionError{Op: op.kind.String(), Key: op.key, Expected: op.expectRev, Current: current, Index: i + 1, Of: len(ops)}
	switch {
	case (op.kind == opCreate || op.kind == opAbsent) && current != 0:
		e.class = errdefs.ErrAlreadyExists
	case (op.kind == opUpdate || op.kind == opDelete || op.kind == opCheck) && current == 0:
		e.class = errdefs.ErrNotFound
	case (op.kind == opUpdate || op.kind == opCheck || op.kind == opDelete && op.expectRev > 0) && current != op.expectRev:
		e.class = errdefs.ErrConflict
	default:
		return nil
	}
	return e
}

// opError prefixes err with the op's position when ops has several.
func opError(ops []Op, i int, err error) error {
	if len(ops) == 1 {
		return err
	}
	return fmt.Errorf("apply op %d of %d: %w", i+1, len(ops), err)
}

func describe(ops []Op) string {
	if len(ops) == 1 {
		return ops[0].String()
	}
	return fmt.Sprintf("apply of %d ops starting with %s", len(ops), ops[0])
}
