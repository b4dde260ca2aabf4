package scheduler_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler"
	"github.com/bcs-mesos/bcs-mesos/pkg/scheduler/schedulertest"
)

// TestScenarios runs every testdata/*.txt script (datadriven format: a
// command, a line "----", the core's output, a blank line); each script
// gets a fresh Harness. Rewrite the expected output with -rewrite.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scenario scripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			h := schedulertest.New(t)
			datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
				command := d.Cmd
				for _, a := range d.CmdArgs {
					command += " " + a.String()
				}
				out := h.Run(command)
				// Statuses and pending launches are kept step by step:
				// they must equal a full recomputation.
				if stale := scheduler.StaleKept(h.Core()); len(stale) > 0 {
					t.Errorf("%s: kept state differs:\n%s", d.Pos, strings.Join(stale, "\n"))
				}
				if len(out) == 0 {
					return ""
				}
				return strings.Join(out, "\n") + "\n"
			})
		})
	}
}
