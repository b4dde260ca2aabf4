package store_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

func newSealer(t *testing.T) *store.Sealer {
	t.Helper()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	s, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Issue: "AES-GCM … random 12-byte nonce per seal": values round-trip and
// sealing the same value twice gives different ciphertexts.
func TestSealOpenRoundTrip(t *testing.T) {
	s := newSealer(t)
	ad := []byte("secrets/default/db")
	for _, plaintext := range []string{"", "hunter2", strings.Repeat("x", 1<<16)} {
		sealed, err := s.Seal([]byte(plaintext), ad)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Seal([]byte(plaintext), ad)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(sealed, again) {
			t.Fatal("two seals of one value are identical: nonce reused")
		}
		opened, err := s.Open(sealed, ad)
		if err != nil || string(opened) != plaintext {
			t.Fatalf("Open = %d bytes, %v; want the %d bytes sealed", len(opened), err, len(plaintext))
		}
	}
}

// Issue: "tampered ciphertext fails": flipping any bit of any byte
// (version, key id, nonce, ciphertext, tag) or truncating is refused.
func TestOpenRejectsTampering(t *testing.T) {
	s := newSealer(t)
	ad := []byte("secrets/default/db")
	sealed, err := s.Seal([]byte("hunter2"), ad)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sealed {
		tampered := bytes.Clone(sealed)
		tampered[i] ^= 0x01
		if _, err := s.Open(tampered, ad); !errors.Is(err, store.ErrCannotUnseal) {
			t.Fatalf("byte %d flipped: Open = %v, want %v", i, err, store.ErrCannotUnseal)
		}
	}
	for _, n := range []int{0, 1, 17, len(sealed) - 1} {
		if _, err := s.Open(sealed[:n], ad); !errors.Is(err, store.ErrCannotUnseal) {
			t.Fatalf("truncated to %d bytes: Open = %v, want %v", n, err, store.ErrCannotUnseal)
		}
	}
}

// Issue: "use the object key as associated data so ciphertexts cannot be
// swapped between keys".
func TestOpenRejectsOtherAssociatedData(t *testing.T) {
	s := newSealer(t)
	sealed, err := s.Seal([]byte("hunter2"), []byte("secrets/default/db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ad := range []string{"secrets/default/other", "", "secrets/default/db/"} {
		if _, err := s.Open(sealed, []byte(ad)); !errors.Is(err, store.ErrCannotUnseal) {
			t.Fatalf("associated data %q: Open = %v, want %v", ad, err, store.ErrCannotUnseal)
		}
	}
}

// A value sealed under one key names that key's id when another key tries
// it, which is what a key rotation will need; the error never holds the
// value.
func TestOpenRejectsOtherKey(t *testing.T) {
	sealed, err := newSealer(t).Seal([]byte("hunter2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newSealer(t).Open(sealed, nil)
	if !errors.Is(err, store.ErrCannotUnseal) || !strings.Contains(err.Error(), "key id") {
		t.Fatalf("Open with another key = %v, want %v naming the key id", err, store.ErrCannotUnseal)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal("error quotes the secret")
	}
}

func TestNewSealerRejectsWrongKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := store.NewSealer(make([]byte, n)); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%d-byte key: %v, want %v", n, err, errdefs.ErrInvalidArgument)
		}
	}
}

// Issue: "32-byte key file (generated with crypto/rand on first start if
// missing, file mode 0600)" and reused on the next start.
func TestLoadOrCreateKeyCreatesThenReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bcs-data")
	path := filepath.Join(dir, "secret.key")
	first, err := store.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("first LoadOrCreateKey: %v", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || info.Size() != store.KeySize {
		t.Fatalf("key file mode %04o size %d, want 0600 and %d", info.Mode().Perm(), info.Size(), store.KeySize)
	}
	if dirInfo, err := os.Stat(dir); err != nil || dirInfo.Mode().Perm() != 0o700 {
		t.Fatalf("created key directory: %v, %v; want mode 0700", dirInfo.Mode().Perm(), err)
	}
	if bytes.Equal(first, make([]byte, store.KeySize)) {
		t.Fatal("generated key is all zeros")
	}
	second, err := store.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("second LoadOrCreateKey: %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("second start generated a new key instead of reading the file")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".secret-key-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}
}

// Several processes starting at once on a fresh data dir agree on one key.
func TestLoadOrCreateKeyConcurrentFirstStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	const starters = 8
	keys := make([][]byte, starters)
	errs := make([]error, starters)
	var wg sync.WaitGroup
	for i := range starters {
		wg.Go(func() { keys[i], errs[i] = store.LoadOrCreateKey(path) })
	}
	wg.Wait()
	for i := range starters {
		if errs[i] != nil {
			t.Fatalf("starter %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("starter %d got a different key", i)
		}
	}
}

// Issue: "refuse a key file with the wrong size or group/world-readable
// perms with a clear error".
func TestLoadOrCreateKeyRefusesBadFiles(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		mode    os.FileMode
		message string
	}{
		{"too short", 16, 0o600, "is 16 bytes, want exactly 32"},
		{"too long", 33, 0o600, "is 33 bytes, want exactly 32"},
		{"empty", 0, 0o600, "is 0 bytes"},
		{"group readable", 32, 0o640, "chmod 600"},
		{"world readable", 32, 0o604, "chmod 600"},
		{"group writable", 32, 0o620, "chmod 600"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secret.key")
			if err := os.WriteFile(path, make([]byte, c.size), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			_, err := store.LoadOrCreateKey(path)
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.message) || !strings.Contains(err.Error(), path) {
				t.Fatalf("LoadOrCreateKey = %v, want %v naming %s and saying %q", err, errdefs.ErrInvalidArgument, path, c.message)
			}
			if info, _ := os.Stat(path); info.Size() != int64(c.size) {
				t.Fatal("refused key file was replaced")
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		path := t.TempDir()
		if _, err := store.LoadOrCreateKey(path); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Fatalf("LoadOrCreateKey(directory) = %v, want %v", err, errdefs.ErrInvalidArgument)
		}
	})
}
