package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrDamagedDataDir is wrapped when the embedded etcd's directory cannot
// be started from: etcd itself would panic or hang on it.
var ErrDamagedDataDir = errors.New("embedded etcd data directory is damaged")

// restoreAdvice is what an operator can do about a damaged directory.
const restoreAdvice = "restore %s from a backup (or an etcd snapshot: etcdutl snapshot restore), " +
	"or move it away to start with an empty store"

// checkEtcdDataDir finds, before etcd opens dir, the damage etcd meets
// with a panic in one of its goroutines (a corrupt or truncated database
// file) or by hanging (a database without its write-ahead log). A
// directory without a database is left to etcd: it is new, or etcd
// rebuilds the database from the log. A database without a log that
// holds no key is a first start stopped before etcd wrote its log (a
// SIGTERM while starting): the member is removed, to start anew.
func checkEtcdDataDir(dir string) error {
	db := filepath.Join(dir, "member", "snap", "db")
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("embedded etcd database %q: %w", db, err)
	}
	walDir := filepath.Join(dir, "member", "wal")
	wals, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	if err != nil {
		return err
	}
	if err := checkBoltFile(db, dir); err != nil || len(wals) > 0 {
		return err
	}
	if keys, err := boltKeys(db); err != nil || keys > 0 {
		return fmt.Errorf("embedded etcd: the database %q has no write-ahead log (no *.wal file in %q); "+restoreAdvice+": %w",
			db, walDir, dir, ErrDamagedDataDir)
	}
	return os.RemoveAll(filepath.Join(dir, "member"))
}

// boltKeys counts the keys etcd holds in the bbolt database at path.
func boltKeys(path string) (int, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	keys := 0
	err = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("key")); b != nil {
			keys = b.Stats().KeyN
		}
		return nil
	})
	return keys, err
}

// checkBoltFile opens the bbolt database at path read-only and reads every
// page reachable from its buckets, which is what etcd does when it opens
// it. bbolt reports damage by panicking (and a file shorter than its pages
// by a fault on the memory map); both are turned into an error here.
func checkBoltFile(path, dataDir string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embedded etcd: the database %q is corrupt (%v); "+restoreAdvice+": %w", path, r, dataDir, ErrDamagedDataDir)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("embedded etcd: the database %q is locked by another process: is another bcs-scheduler running with this data directory?", path)
	}
	if err != nil {
		return fmt.Errorf("embedded etcd: the database %q cannot be opened (%v); "+restoreAdvice+": %w", path, err, dataDir, ErrDamagedDataDir)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return readBucket(b) })
	})
	if err != nil {
		return fmt.Errorf("embedded etcd: the database %q is corrupt (%v); "+restoreAdvice+": %w", path, err, dataDir, ErrDamagedDataDir)
	}
	return nil
}

func readBucket(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v != nil {
			return nil
		}
		if nested := b.Bucket(k); nested != nil {
			return readBucket(nested)
		}
		return nil
	})
}
