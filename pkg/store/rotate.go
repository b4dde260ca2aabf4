package store

import (
	"context"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Rotation counts what RotateSealingKey did.
type Rotation struct {
	Resealed   int // keys whose value was re-sealed under the new key
	AlreadyNew int // keys whose sealed value or passwords were all under the new key already (a re-run)
	Retried    int // compare-and-swaps lost to another writer, then redone
}

// maxResealAttempts bounds the compare-and-swaps of one key; only a
// replica writing the same key over and over loses that many.
const maxResealAttempts = 10

// RotateSealingKey re-seals every sealed value of the store (under
// secrets/ and notifytargets/, and the SealedMembers of every other value)
// from the key from to the key to, then records to's fingerprint. The
// store it runs on needs no Sealer of its own.
//
// It is safe to run again after it was interrupted: it records the
// rotation (SealingRotationKey) before re-sealing, replicas refuse to start
// while that record exists, values already under to are skipped, and each
// value is replaced by compare-and-swap on its revision. Replicas must be
// stopped: one still running would seal new values with from. It refuses
// while a replica takes part in the scheduler election.
func (s *Store) RotateSealingKey(ctx context.Context, from, to *Sealer) (Rotation, error) {
	if from.Fingerprint() == to.Fingerprint() {
		return Rotation{}, fmt.Errorf("rotate sealing key: the new key is the old key (fingerprint %s): %w", to.Fingerprint(), errdefs.ErrInvalidArgument)
	}
	if string(from.keyID()) == string(to.keyID()) {
		// Sealed values name their key by its id only.
		return Rotation{}, fmt.Errorf("rotate sealing key: the old and new keys share the key id %x; generate another new key: %w", to.keyID(), errdefs.ErrInvalidArgument)
	}
	if err := s.refuseRunningReplicas(ctx); err != nil {
		return Rotation{}, err
	}
	record, err := s.startRotation(ctx, from, to)
	if err != nil {
		return Rotation{}, err
	}
	var r Rotation
	if err := s.resealAll(ctx, from, to, &r); err != nil {
		return r, err
	}
	if record.rotatingTo == "" { // the store already seals with to: a re-run after the switch
		return r, nil
	}
	return r, s.finishRotation(ctx, record)
}

// refuseRunningReplicas fails while any replica campaigns in an election
// (NewElection): its key lives as long as the replica's etcd session.
func (s *Store) refuseRunningReplicas(ctx context.Context) error {
	resp, err := s.getPage(ctx, s.prefix+electionPrefix, []clientv3.OpOption{clientv3.WithPrefix()})
	if err != nil {
		return classify(ctx, "list the election", err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	var replicas []string
	for _, kv := range resp.Kvs {
		replicas = append(replicas, string(kv.Value))
	}
	return fmt.Errorf("rotate sealing key: %d replica(s) are running (%s): stop every replica first, or wait for the election TTL after they died: %w",
		len(replicas), strings.Join(replicas, ", "), errdefs.ErrConflict)
}

// startRotation checks that the store is sealed with from (or is between
// from and to, or already switched to to) and records the rotation. The
// returned record has rotatingTo "" when the store already seals with to.
func (s *Store) startRotation(ctx context.Context, from, to *Sealer) (sealingRecord, error) {
	record, err := s.readSealingRecord(ctx)
	if err != nil {
		return record, err
	}
	switch {
	case record.fingerprint == "":
		return record, fmt.Errorf("rotate sealing key: the store records no sealing key fingerprint (%s): start bcs-scheduler once with the current key file first: %w",
			SealingFingerprintKey, ErrSealingKey)
	case record.fingerprint == to.Fingerprint() && record.rotatingTo == "":
		return record, nil
	case record.fingerprint != from.Fingerprint():
		return record, fmt.Errorf("rotate sealing key: the old key file has fingerprint %s, but the store's values are sealed with the key of fingerprint %s: "+
			"give the key file the replicas use: %w", from.Fingerprint(), record.fingerprint, ErrSealingKey)
	case record.rotatingTo == to.Fingerprint():
		return record, nil // resume
	case record.rotatingTo != "":
		return record, fmt.Errorf("rotate sealing key: an unfinished rotation to the key of fingerprint %s is recorded (%s), the new key file has fingerprint %s: "+
			"finish that rotation with its new key file first: %w", record.rotatingTo, SealingRotationKey, to.Fingerprint(), ErrSealingKey)
	}
	full := s.prefix + SealingRotationKey
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Txn(rctx).
		If(clientv3.Compare(clientv3.ModRevision(s.prefix+SealingFingerprintKey), "=", record.fingerprintRev),
			clientv3.Compare(clientv3.Version(full), "=", 0)).
		Then(clientv3.OpPut(full, to.Fingerprint())).
		Commit()
	if err != nil {
		return record, classify(ctx, "record the key rotation", err)
	}
	if !resp.Succeeded {
		return record, fmt.Errorf("rotate sealing key: the sealing record changed meanwhile (another rotation?): %w", errdefs.ErrConflict)
	}
	record.rotatingTo, record.rotationRev = to.Fingerprint(), resp.Header.Revision
	return record, nil
}

// finishRotation switches the stored fingerprint to the new key and drops
// the rotation record, both at once.
func (s *Store) finishRotation(ctx context.Context, record sealingRecord) error {
	fingerprint, rotation := s.prefix+SealingFingerprintKey, s.prefix+SealingRotationKey
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Txn(rctx).
		If(clientv3.Compare(clientv3.ModRevision(fingerprint), "=", record.fingerprintRev),
			clientv3.Compare(clientv3.ModRevision(rotation), "=", record.rotationRev)).
		Then(clientv3.OpPut(fingerprint, record.rotatingTo), clientv3.OpDelete(rotation)).
		Commit()
	if err != nil {
		return classify(ctx, "switch the sealing key fingerprint", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("rotate sealing key: the sealing record changed meanwhile (another rotation?): %w", errdefs.ErrConflict)
	}
	return nil
}

// resealAll walks every key of the store, page by page, re-sealing what
// from sealed.
func (s *Store) resealAll(ctx context.Context, from, to *Sealer, r *Rotation) error {
	end := clientv3.GetPrefixRangeEnd(s.prefix)
	for next := s.prefix; ; {
		resp, err := s.getPage(ctx, next, []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(s.pageSize)})
		if err != nil {
			return classify(ctx, "list the store", err)
		}
		for _, kv := range resp.Kvs {
			if err := s.resealKey(ctx, kv, from, to, r); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// resealKey replaces one key's value by its re-sealed bytes if its
// revision is still kv's; when another writer came first it reads the key
// again and redoes it.
func (s *Store) resealKey(ctx context.Context, kv *mvccpb.KeyValue, from, to *Sealer, r *Rotation) error {
	key := s.relative(kv.Key)
	for attempt := 1; ; attempt++ {
		resealed, changed, sealedByTo, err := reseal(key, kv.Value, from, to)
		if err != nil {
			return fmt.Errorf("rotate sealing key: %w", err)
		}
		if !changed {
			if sealedByTo {
				r.AlreadyNew++
			}
			return nil
		}
		rctx, cancel := s.withTimeout(ctx)
		resp, err := s.client.Txn(rctx).
			If(clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision)).
			Then(clientv3.OpPut(string(kv.Key), string(resealed))).
			Else(clientv3.OpGet(string(kv.Key))).
			Commit()
		cancel()
		if err != nil {
			return classify(ctx, fmt.Sprintf("re-seal %q", key), err)
		}
		if resp.Succeeded {
			r.Resealed++
			return nil
		}
		r.Retried++
		current := resp.Responses[0].GetResponseRange().GetKvs()
		if len(current) == 0 {
			return nil // deleted meanwhile: nothing left to re-seal
		}
		if attempt == maxResealAttempts {
			return fmt.Errorf("rotate sealing key: %q changed %d times while being re-sealed: %w", key, attempt, errdefs.ErrConflict)
		}
		kv = current[0]
	}
}

// reseal returns value with what from sealed sealed by to instead, whether
// that changed anything, and whether to had sealed anything in it already.
func reseal(key string, value []byte, from, to *Sealer) (resealed []byte, changed, sealedByTo bool, err error) {
	if isSecretKey(key) {
		if to.sealedThis(value) {
			return value, false, true, nil
		}
		plain, err := from.Open(value, []byte(key))
		if err != nil {
			return nil, false, false, fmt.Errorf("key %q: %w", key, err)
		}
		resealed, err := to.Seal(plain, []byte(key))
		return resealed, err == nil, false, err
	}
	resealed, err = rewriteMembers(value, func(name string, literal []byte, text string) ([]byte, error) {
		sealed, ok, err := sealedMember(key, name, text)
		if !ok || err != nil {
			return literal, err
		}
		if to.sealedThis(sealed) {
			sealedByTo = true
			return literal, nil
		}
		opened, err := openMember(from, key, name, sealed)
		if err != nil {
			return nil, err
		}
		changed = true
		return sealMember(to, key, name, opened)
	})
	if err != nil {
		return nil, false, false, err
	}
	return resealed, changed, sealedByTo, nil
}
