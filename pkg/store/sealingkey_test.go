package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// sealingEtcd is one embedded etcd for a test; each case opens its stores
// under a prefix of its own, so each sees an empty store.
type sealingEtcd struct {
	t    *testing.T
	etcd *store.Embedded
	raw  *clientv3.Client
	seq  int
}

func newSealingEtcd(t *testing.T) *sealingEtcd {
	e := startEmbedded(t, t.TempDir())
	raw, err := clientv3.New(clientv3.Config{Endpoints: e.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return &sealingEtcd{t: t, etcd: e, raw: raw}
}

// prefix returns a store prefix no other case of the test uses.
func (e *sealingEtcd) prefix() string {
	e.seq++
	return fmt.Sprintf("/%s-%d/", e.t.Name(), e.seq)
}

// open opens a store under prefix sealing with keyFile.
func (e *sealingEtcd) open(prefix, keyFile string) (*store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := store.Open(ctx, store.Config{Endpoints: e.etcd.Endpoints(), Prefix: prefix, KeyFile: keyFile})
	if err == nil {
		e.t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func (e *sealingEtcd) mustOpen(prefix, keyFile string) *store.Store {
	e.t.Helper()
	s, err := e.open(prefix, keyFile)
	if err != nil {
		e.t.Fatalf("Open with key file %s: %v", keyFile, err)
	}
	return s
}

// openSealer opens a store under prefix with a Sealer and no fingerprint
// check, as a release before fingerprints did.
func (e *sealingEtcd) openSealer(prefix string, sealer *store.Sealer) *store.Store {
	e.t.Helper()
	s, err := store.Open(context.Background(), store.Config{Endpoints: e.etcd.Endpoints(), Prefix: prefix, Sealer: sealer})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// stored returns the bytes etcd holds at key, nil when it has none.
func (e *sealingEtcd) stored(prefix, key string) []byte {
	e.t.Helper()
	resp, err := e.raw.Get(context.Background(), prefix+key)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0].Value
}

// writeKey writes a new random key file and returns its path.
func writeKey(t *testing.T, dir, name string) string {
	t.Helper()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fingerprintOf is what `sha256sum` prints for the key file.
func fingerprintOf(t *testing.T, keyFile string) string {
	t.Helper()
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

func sealerOf(t *testing.T, keyFile string) *store.Sealer {
	t.Helper()
	key, err := store.LoadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantSealingKeyError(t *testing.T, err error, wantText ...string) {
	t.Helper()
	if !errors.Is(err, store.ErrSealingKey) {
		t.Fatalf("Open = %v, want %v", err, store.ErrSealingKey)
	}
	for _, w := range wantText {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// One sealing key: the first start on an empty store creates
// the key file and records its fingerprint (the SHA-256 of the file, never
// the key); a start with another key is refused naming the key file and
// both fingerprints; a deleted key file is an error, never regenerated.
func TestSealingKeyFingerprint(t *testing.T) {
	e := newSealingEtcd(t)
	dir := t.TempDir()
	prefix, keyFile := e.prefix(), filepath.Join(dir, "secret.key")

	s := e.mustOpen(prefix, keyFile)
	fingerprint := fingerprintOf(t, keyFile)
	if got := string(e.stored(prefix, store.SealingFingerprintKey)); got != fingerprint {
		t.Fatalf("stored fingerprint %q, want the key file's SHA-256 %s", got, fingerprint)
	}
	if _, err := s.Create(context.Background(), "secrets/default/db", []byte("hunter2")); err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(keyFile)
	if raw := string(e.stored(prefix, store.SealingFingerprintKey)); strings.Contains(raw, string(key)) || strings.Contains(raw, hex.EncodeToString(key)) {
		t.Fatal("the stored fingerprint holds the key")
	}
	// The same key again (a restart, or another replica given the file).
	e.mustOpen(prefix, keyFile)

	other := writeKey(t, dir, "other.key")
	_, err := e.open(prefix, other)
	wantSealingKeyError(t, err, other, fingerprintOf(t, other), fingerprint, "every replica must use the same key file")

	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	_, err = e.open(prefix, keyFile)
	wantSealingKeyError(t, err, keyFile, "does not exist", fingerprint, "copy the key file")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing key file: %v does not wrap fs.ErrNotExist", err)
	}
	if _, err := os.Stat(keyFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the missing key file was created again: %v", err)
	}
}

// A store written by a release that kept no fingerprint: its sealed
// values name their key by id. A missing key file or another key is
// refused; the key that sealed them is recorded.
func TestSealingKeyOfStoreWithoutFingerprint(t *testing.T) {
	e := newSealingEtcd(t)
	dir := t.TempDir()
	prefix, keyFile := e.prefix(), writeKey(t, dir, "secret.key")
	old := e.openSealer(prefix, sealerOf(t, keyFile))
	if _, err := old.Create(context.Background(), "notifytargets/cb-1", []byte("http://u:p@host/")); err != nil {
		t.Fatal(err)
	}

	missing := filepath.Join(dir, "missing.key")
	_, err := e.open(prefix, missing)
	wantSealingKeyError(t, err, missing, "notifytargets/cb-1")
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a key file was created for a store with sealed values: %v", err)
	}
	other := writeKey(t, dir, "other.key")
	_, err = e.open(prefix, other)
	wantSealingKeyError(t, err, "notifytargets/cb-1", fingerprintOf(t, other))
	if got := e.stored(prefix, store.SealingFingerprintKey); got != nil {
		t.Fatalf("a refused key recorded fingerprint %s", got)
	}

	s := e.mustOpen(prefix, keyFile)
	if got, want := string(e.stored(prefix, store.SealingFingerprintKey)), fingerprintOf(t, keyFile); got != want {
		t.Fatalf("stored fingerprint %q, want %s", got, want)
	}
	if v, err := s.Get(context.Background(), "notifytargets/cb-1"); err != nil || string(v.Value) != "http://u:p@host/" {
		t.Fatalf("Get = %q, %v", v.Value, err)
	}
}

// Replicas starting together on an empty store agree: with one shared
// key file all start; with a key file each (each would seal with a key
// the others cannot read) exactly one starts and the others are refused.
func TestSealingKeyConcurrentFirstStarts(t *testing.T) {
	e := newSealingEtcd(t)
	const replicas = 5
	start := func(prefix string, keyFile func(i int) string) []error {
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Go(func() { _, errs[i] = e.open(prefix, keyFile(i)) })
		}
		wg.Wait()
		return errs
	}

	shared := filepath.Join(t.TempDir(), "secret.key")
	prefix := e.prefix()
	for i, err := range start(prefix, func(int) string { return shared }) {
		if err != nil {
			t.Errorf("replica %d with the shared key file: %v", i, err)
		}
	}
	if got, want := string(e.stored(prefix, store.SealingFingerprintKey)), fingerprintOf(t, shared); got != want {
		t.Errorf("stored fingerprint %q, want the shared key's %s", got, want)
	}

	dirs := make([]string, replicas)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	prefix = e.prefix()
	errs := start(prefix, func(i int) string { return filepath.Join(dirs[i], "secret.key") })
	var started []int
	for i, err := range errs {
		switch {
		case err == nil:
			started = append(started, i)
		case !errors.Is(err, store.ErrSealingKey):
			t.Errorf("replica %d: %v, want %v", i, err, store.ErrSealingKey)
		}
	}
	if len(started) != 1 {
		t.Fatalf("replicas %v started with keys of their own, want exactly one: %v", started, errs)
	}
	winner := filepath.Join(dirs[started[0]], "secret.key")
	if got, want := string(e.stored(prefix, store.SealingFingerprintKey)), fingerprintOf(t, winner); got != want {
		t.Errorf("stored fingerprint %q, want the started replica's %s", got, want)
	}
}

// sealedData writes one value of every sealed kind and one plain value.
var sealedData = map[string]string{
	"secrets/default/db":   `{"password":"hunter2"}`,
	"notifytargets/cb-1":   "http://user:pass@hooks.example/x",
	"apps/default/web":     `{"spec":{"containers":[{"imagePullPasswd":"reg-pass"}],"uris":[{"pwd":"pkg-pass"}]}}`,
	"configmaps/default/c": `{"datas":{"a":{"remotePasswd":"ftp-pass"}}}`,
	"agents/agent-1":       `{"hostname":"agent-1"}`,
}

func writeSealedData(t *testing.T, s *store.Store) {
	t.Helper()
	for key, value := range sealedData {
		if _, err := s.Create(context.Background(), key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
}

// keyIDs returns the key ids of the sealed parts etcd holds at key: the
// value's own for secrets/ and notifytargets/, each sealed password's for
// others.
func (e *sealingEtcd) keyIDs(prefix, key string) []string {
	e.t.Helper()
	raw := e.stored(prefix, key)
	if strings.HasPrefix(key, "secrets/") || strings.HasPrefix(key, "notifytargets/") {
		return []string{hex.EncodeToString(raw[1:5])}
	}
	var ids []string
	for _, part := range strings.Split(string(raw), `"bcs-sealed:`)[1:] {
		sealed, err := base64.StdEncoding.DecodeString(part[:strings.IndexByte(part, '"')])
		if err != nil {
			e.t.Fatalf("%s: %v", key, err)
		}
		ids = append(ids, hex.EncodeToString(sealed[1:5]))
	}
	return ids
}

// wantKeyIDs checks every sealed part of the sealed data is under keyFile.
func (e *sealingEtcd) wantKeyIDs(prefix, keyFile string) {
	e.t.Helper()
	want := fingerprintOf(e.t, keyFile)[:8]
	for key := range sealedData {
		ids := e.keyIDs(prefix, key)
		if key == "agents/agent-1" {
			continue
		}
		if len(ids) == 0 {
			e.t.Errorf("%s holds nothing sealed: %s", key, e.stored(prefix, key))
		}
		for _, id := range ids {
			if id != want {
				e.t.Errorf("%s: sealed under key id %s, want %s", key, id, want)
			}
		}
	}
}

func wantSealedData(t *testing.T, s *store.Store) {
	t.Helper()
	for key, want := range sealedData {
		got, err := s.Get(context.Background(), key)
		if err != nil || string(got.Value) != want {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got.Value, err, want)
		}
	}
}

// Key rotation: every kind of sealed value is re-sealed under
// the new key (etcd's bytes carry the new key id), the fingerprint is
// switched, the old key is refused from then on, plain values are left
// alone and everything reads back through the new key.
func TestRotateSealingKey(t *testing.T) {
	e := newSealingEtcd(t)
	dir := t.TempDir()
	prefix, oldKey, newKey := e.prefix(), writeKey(t, dir, "old.key"), writeKey(t, dir, "new.key")
	writeSealedData(t, e.mustOpen(prefix, oldKey))
	e.wantKeyIDs(prefix, oldKey)
	plainBefore := e.stored(prefix, "agents/agent-1")

	r, err := e.openSealer(prefix, nil).RotateSealingKey(context.Background(), sealerOf(t, oldKey), sealerOf(t, newKey))
	if err != nil {
		t.Fatalf("RotateSealingKey: %v", err)
	}
	if r.Resealed != 4 || r.AlreadyNew != 0 {
		t.Errorf("rotation %+v, want 4 re-sealed", r)
	}
	e.wantKeyIDs(prefix, newKey)
	if !bytes.Equal(e.stored(prefix, "agents/agent-1"), plainBefore) {
		t.Error("a value without sealed parts was rewritten")
	}
	if got, want := string(e.stored(prefix, store.SealingFingerprintKey)), fingerprintOf(t, newKey); got != want {
		t.Errorf("stored fingerprint %q after the rotation, want the new key's %s", got, want)
	}
	if e.stored(prefix, store.SealingRotationKey) != nil {
		t.Error("the rotation record outlived the rotation")
	}
	wantSealedData(t, e.mustOpen(prefix, newKey))
	_, err = e.open(prefix, oldKey)
	wantSealingKeyError(t, err, oldKey, fingerprintOf(t, newKey))
}

// A rotation interrupted midway (the rotation recorded, one secret
// already re-sealed): replicas refuse to start with either key, and
// running the rotation again skips what is done, re-seals the rest and
// switches; a third run changes nothing.
func TestRotateSealingKeyResumes(t *testing.T) {
	e := newSealingEtcd(t)
	dir := t.TempDir()
	prefix, oldKey, newKey := e.prefix(), writeKey(t, dir, "old.key"), writeKey(t, dir, "new.key")
	writeSealedData(t, e.mustOpen(prefix, oldKey))
	// The state a crash leaves: the record, then some values re-sealed.
	if _, err := e.raw.Put(context.Background(), prefix+store.SealingRotationKey, fingerprintOf(t, newKey)); err != nil {
		t.Fatal(err)
	}
	done := e.openSealer(prefix, sealerOf(t, newKey))
	if _, err := done.Get(context.Background(), "secrets/default/db"); err == nil {
		t.Fatal("the new key opened a value the old key sealed")
	}
	if _, err := done.Put(context.Background(), "secrets/default/db", []byte(sealedData["secrets/default/db"])); err != nil {
		t.Fatal(err)
	}
	for _, keyFile := range []string{oldKey, newKey} {
		_, err := e.open(prefix, keyFile)
		wantSealingKeyError(t, err, "unfinished", "rotate-key")
	}

	rotate := func() store.Rotation {
		t.Helper()
		r, err := e.openSealer(prefix, nil).RotateSealingKey(context.Background(), sealerOf(t, oldKey), sealerOf(t, newKey))
		if err != nil {
			t.Fatalf("RotateSealingKey: %v", err)
		}
		return r
	}
	if r := rotate(); r.Resealed != 3 || r.AlreadyNew != 1 {
		t.Errorf("resumed rotation %+v, want 3 re-sealed and 1 already new", r)
	}
	e.wantKeyIDs(prefix, newKey)
	wantSealedData(t, e.mustOpen(prefix, newKey))
	if r := rotate(); r.Resealed != 0 || r.AlreadyNew != 4 {
		t.Errorf("rotation run again %+v, want nothing re-sealed and 4 already new", r)
	}
}

// The rotation refuses what would lose data: an old key that is not the
// store's, a new key while another rotation is unfinished, and running
// replicas (they would go on sealing with the old key).
func TestRotateSealingKeyRefusals(t *testing.T) {
	e := newSealingEtcd(t)
	dir := t.TempDir()
	prefix, oldKey, newKey := e.prefix(), writeKey(t, dir, "old.key"), writeKey(t, dir, "new.key")
	writeSealedData(t, e.mustOpen(prefix, oldKey))
	plain := e.openSealer(prefix, nil)
	ctx := context.Background()

	stranger := writeKey(t, dir, "stranger.key")
	_, err := plain.RotateSealingKey(ctx, sealerOf(t, stranger), sealerOf(t, newKey))
	wantSealingKeyError(t, err, fingerprintOf(t, stranger), fingerprintOf(t, oldKey))

	election, err := e.openSealer(prefix, nil).NewElection(ctx, "scheduler", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := election.Campaign(ctx, "http://replica-1:8080"); err != nil {
		t.Fatal(err)
	}
	_, err = plain.RotateSealingKey(ctx, sealerOf(t, oldKey), sealerOf(t, newKey))
	if err == nil || !strings.Contains(err.Error(), "http://replica-1:8080") || !strings.Contains(err.Error(), "stop every replica") {
		t.Errorf("rotation with a replica running: %v", err)
	}
	if err := election.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	e.wantKeyIDs(prefix, oldKey)

	if _, err := e.raw.Put(ctx, prefix+store.SealingRotationKey, fingerprintOf(t, stranger)); err != nil {
		t.Fatal(err)
	}
	_, err = plain.RotateSealingKey(ctx, sealerOf(t, oldKey), sealerOf(t, newKey))
	wantSealingKeyError(t, err, "unfinished rotation", fingerprintOf(t, stranger))
	e.wantKeyIDs(prefix, oldKey)
}
