package registry_test

import (
	"errors"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// SetUsageReport writes the flag alone, at the revision read, and
// AppsReportingUsage lists the applications it is on for.
func TestSetUsageReport(t *testing.T) {
	r, _ := newRegistry(t)
	created := mustCreate(t, r, process(2))
	if _, err := r.SetUsageReport(ctx, "ns-a", "gamesvc", true, created.Revision-1); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("SetUsageReport at an older revision: %v, want a conflict", err)
	}
	on, err := r.SetUsageReport(ctx, "ns-a", "gamesvc", true, created.Revision)
	if err != nil {
		t.Fatalf("SetUsageReport on: %v", err)
	}
	stored, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if !stored.UsageReport || stored.Revision != on.Revision || stored.Version != created.Version ||
		stored.Instances != created.Instances || !stored.UpdatedAt.Equal(created.UpdatedAt) {
		t.Errorf("stored %+v after turning reports on; want the flag set, revision %d and nothing else changed from %+v", stored, on.Revision, created)
	}
	if v := versionNumbers(t, r, "ns-a", "gamesvc"); len(v) != 1 {
		t.Errorf("versions %v after turning reports on; want no new version", v)
	}
	again, err := r.SetUsageReport(ctx, "ns-a", "gamesvc", true, created.Revision)
	if err != nil || again.Revision != on.Revision {
		t.Errorf("turning reports on again from a stale revision: %+v, %v; want the record unwritten", again, err)
	}
	reporting, err := r.AppsReportingUsage(ctx)
	if err != nil || len(reporting) != 1 || reporting[0].Name != "gamesvc" || reporting[0].Revision != on.Revision {
		t.Fatalf("AppsReportingUsage: %+v, %v; want gamesvc at revision %d", reporting, err, on.Revision)
	}
	if _, err := r.SetUsageReport(ctx, "ns-a", "gamesvc", false, on.Revision); err != nil {
		t.Fatalf("SetUsageReport off: %v", err)
	}
	if reporting, err := r.AppsReportingUsage(ctx); err != nil || len(reporting) != 0 {
		t.Errorf("AppsReportingUsage after turning reports off: %+v, %v; want none", reporting, err)
	}
	if _, err := r.SetUsageReport(ctx, "ns-a", "absent", true, 0); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("SetUsageReport of an absent application: %v, want not found", err)
	}
}
