package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SIGTERM always ends the process: etcd given a database
// without its WAL (which StartEmbedded's pre-check refuses) never gets
// ready; a start that ctx ends returns at once instead of hanging.
func TestStartEndsWithContextWhileEtcdHangs(t *testing.T) {
	dataDir := t.TempDir()
	e, err := StartEmbedded(context.Background(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	dir := filepath.Join(dataDir, embeddedSubdir)
	if err := os.RemoveAll(filepath.Join(dir, "member", "wal")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan time.Time, 1)
	go func() {
		time.Sleep(2 * time.Second)
		cancelled <- time.Now()
		cancel()
	}()
	e, err = startEmbedded(ctx, dir, embeddedConfig{startTimeout: time.Minute, logLevel: "fatal", compaction: "1h"})
	if err == nil {
		e.Close()
		t.Fatal("etcd started without its WAL: the hang this test needs is gone")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("start = %v, want %v", err, context.Canceled)
	}
	if late := time.Since(<-cancelled); late > time.Second {
		t.Fatalf("returned %s after the context ended", late)
	}
}
