package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The sealing key's record in the store. SealingFingerprintKey holds the
// Fingerprint of the key every sealed value is sealed with, written once by
// the first start on an empty store; SealingRotationKey exists only while
// RotateSealingKey runs (or after it was interrupted) and holds the new
// key's fingerprint.
const (
	SealingFingerprintKey = "sealing/fingerprint"
	SealingRotationKey    = "sealing/rotation"
)

// ErrSealingKey is wrapped by every refusal of a key file that does not
// fit the store: another key than the stored fingerprint, a missing key
// file while sealed values exist, or an unfinished rotation. A missing key
// file also wraps fs.ErrNotExist.
var ErrSealingKey = errors.New("sealing key does not fit the store")

// sealingRecord is what the store says about its sealing key.
type sealingRecord struct {
	fingerprint, rotatingTo     string // "" when absent
	fingerprintRev, rotationRev int64  // mod revisions; 0 when absent
}

func (s *Store) readSealingRecord(ctx context.Context) (sealingRecord, error) {
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Get(rctx, s.prefix+"sealing/", clientv3.WithPrefix())
	if err != nil {
		return sealingRecord{}, classify(ctx, "read the sealing key fingerprint", err)
	}
	var r sealingRecord
	for _, kv := range resp.Kvs {
		switch s.relative(kv.Key) {
		case SealingFingerprintKey:
			r.fingerprint, r.fingerprintRev = string(kv.Value), kv.ModRevision
		case SealingRotationKey:
			r.rotatingTo, r.rotationRev = string(kv.Value), kv.ModRevision
		}
	}
	return r, nil
}

// sealerFromKeyFile returns the Sealer of the key in path once it is known
// to be the key the store's values are sealed with (Config.KeyFile).
func (s *Store) sealerFromKeyFile(ctx context.Context, path string) (*Sealer, error) {
	record, err := s.readSealingRecord(ctx)
	if err != nil {
		return nil, err
	}
	if record.rotatingTo != "" {
		return nil, fmt.Errorf("sealing key file %q: a rotation of the sealing key from fingerprint %s to %s is unfinished: "+
			"run `bcs-scheduler rotate-key` again with the same old and new key files, then start the replicas with the new key: %w",
			path, record.fingerprint, record.rotatingTo, ErrSealingKey)
	}
	key, err := LoadKey(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && record.fingerprint != "":
		return nil, fmt.Errorf("sealing key file %q does not exist, but the store's values are sealed with the key of fingerprint %s "+
			"(%s in etcd): a new key could not read them; copy the key file from another replica or restore it from a backup "+
			"(`sha256sum` of the right file prints that fingerprint): %w: %w",
			path, record.fingerprint, SealingFingerprintKey, ErrSealingKey, fs.ErrNotExist)
	case errors.Is(err, fs.ErrNotExist):
		if err := s.refuseNewKeyForSealedValues(ctx, path); err != nil {
			return nil, err
		}
		key, err = LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, err
	}
	sealer, err := NewSealer(key)
	if err != nil {
		return nil, err
	}
	stored := record.fingerprint
	if stored == "" {
		if stored, err = s.recordFingerprint(ctx, sealer); err != nil {
			return nil, err
		}
	}
	if stored != sealer.Fingerprint() {
		return nil, fmt.Errorf("sealing key file %q has fingerprint %s, but the store's values are sealed with the key of fingerprint %s "+
			"(%s in etcd): every replica must use the same key file; copy it from a replica that starts "+
			"(after a key rotation: the new key file) over %q: %w",
			path, sealer.Fingerprint(), stored, SealingFingerprintKey, path, ErrSealingKey)
	}
	return sealer, nil
}

// recordFingerprint stores sealer's fingerprint if none is stored yet and
// returns the stored one: when replicas start together on an empty store,
// the first to write wins and the others compare their key with its.
// A store written by a release that kept no fingerprint gets its key's
// only if its sealed values carry that key's id.
func (s *Store) recordFingerprint(ctx context.Context, sealer *Sealer) (string, error) {
	if err := s.checkSealedValuesUse(ctx, sealer); err != nil {
		return "", err
	}
	full := s.prefix + SealingFingerprintKey
	rctx, cancel := s.withTimeout(ctx)
	defer cancel()
	resp, err := s.client.Txn(rctx).
		If(clientv3.Compare(clientv3.Version(full), "=", 0)).
		Then(clientv3.OpPut(full, sealer.Fingerprint())).
		Else(clientv3.OpGet(full)).
		Commit()
	if err != nil {
		return "", classify(ctx, "record the sealing key fingerprint", err)
	}
	if resp.Succeeded {
		return sealer.Fingerprint(), nil
	}
	return string(resp.Responses[0].GetResponseRange().GetKvs()[0].Value), nil
}

// sealedPrefixes hold values sealed whole (isSecretKey).
var sealedPrefixes = []Kind{KindSecret, KindNotifyTarget}

// firstSealedValue returns the key and stored bytes of one value sealed
// whole, if the store has any.
func (s *Store) firstSealedValue(ctx context.Context) (string, []byte, error) {
	for _, kind := range sealedPrefixes {
		prefix := s.prefix + string(kind) + "/"
		resp, err := s.getPage(ctx, prefix, []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithLimit(1)})
		if err != nil {
			return "", nil, classify(ctx, fmt.Sprintf("list %q", kind+"/"), err)
		}
		if len(resp.Kvs) > 0 {
			return s.relative(resp.Kvs[0].Key), resp.Kvs[0].Value, nil
		}
	}
	return "", nil, nil
}

// refuseNewKeyForSealedValues refuses to create a key for a store that
// has sealed values but no fingerprint (written by an older release).
func (s *Store) refuseNewKeyForSealedValues(ctx context.Context, path string) error {
	key, _, err := s.firstSealedValue(ctx)
	if err != nil || key == "" {
		return err
	}
	return fmt.Errorf("sealing key file %q does not exist, but the store holds sealed values (%q): "+
		"a new key could not read them; copy the key file from another replica or restore it from a backup: %w: %w",
		path, key, ErrSealingKey, fs.ErrNotExist)
}

// checkSealedValuesUse refuses sealer for a store without a fingerprint
// whose sealed values carry another key id.
func (s *Store) checkSealedValuesUse(ctx context.Context, sealer *Sealer) error {
	key, value, err := s.firstSealedValue(ctx)
	if err != nil || key == "" || sealer.sealedThis(value) {
		return err
	}
	return fmt.Errorf("the store records no sealing key fingerprint and its value %q was not sealed by the key of fingerprint %s "+
		"(key id %x): start with the key file the other replicas use: %w", key, sealer.Fingerprint(), sealer.keyID(), ErrSealingKey)
}
