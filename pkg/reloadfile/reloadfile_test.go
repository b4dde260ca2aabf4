package reloadfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/reloadfile"
)

// nonEmpty parses a file of one word; an empty one is an error.
func nonEmpty(data []byte) (string, error) {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", errors.New("empty")
	}
	return s, nil
}

// write replaces the file and moves its modification time on, as an
// editor's save or a secret manager's rename would.
func write(t *testing.T, path, content string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestFileFollowsItsChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if _, err := reloadfile.Load(path, nonEmpty, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v, want not exist", err)
	}
	at := time.Now()
	write(t, path, "", at)
	if _, err := reloadfile.Load(path, nonEmpty, nil); err == nil || err.Error() != "empty" {
		t.Fatalf("Load of a file that does not parse: %v", err)
	}

	write(t, path, "one\n", at)
	var errs []string
	f, err := reloadfile.Load(path, nonEmpty, func(err error) { errs = append(errs, err.Error()) })
	if err != nil || f.Get() != "one" {
		t.Fatalf("Load: %v", err)
	}
	steps := []struct {
		do       func()
		want     string
		wantErrs int
	}{
		{func() { write(t, path, "two\n", at.Add(time.Second)) }, "two", 0},
		// Same size, new time: a change.
		{func() { write(t, path, "six\n", at.Add(2*time.Second)) }, "six", 0},
		// A bad content keeps the last good one, said once.
		{func() { write(t, path, "\n", at.Add(3*time.Second)) }, "six", 1},
		{func() {}, "six", 1},
		{func() { os.Remove(path) }, "six", 2},
		{func() {}, "six", 2},
		{func() { write(t, path, "seven\n", at.Add(4*time.Second)) }, "seven", 2},
	}
	for i, step := range steps {
		step.do()
		if got := f.Get(); got != step.want || len(errs) != step.wantErrs {
			t.Fatalf("step %d: %q with errors %q, want %q with %d", i, got, errs, step.want, step.wantErrs)
		}
	}
	if !strings.Contains(errs[1], "no such file") {
		t.Errorf("a removed file's error: %q", errs[1])
	}
}
