package registry

import (
	"context"
	"fmt"
)

// SetUsageReport turns the usage reports of an application's instances
// on or off (App.UsageReport), as the autoscaler controller does for the
// workloads its resource metrics read. Only that field is written, at
// expectRev (0: whatever the revision): a record written since fails
// with errdefs.ErrConflict. A record already as asked is returned
// unwritten, whatever its revision, so that a caller reading a stale
// view does not conflict with its own earlier write.
func (r *Registry) SetUsageReport(ctx context.Context, namespace, name string, on bool, expectRev int64) (*App, error) {
	app, err := r.GetApp(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if app.UsageReport == on {
		return app, nil
	}
	if err := changedSince(app, expectRev); err != nil {
		return nil, err
	}
	app.UsageReport = on
	ops, err := r.appWrite(app, app.Revision)
	if err != nil {
		return nil, err
	}
	rev, err := r.store.Apply(ctx, ops[0])
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: usage reports: %w", app.Kind, namespace, name, err)
	}
	app.Revision = rev
	return app, nil
}

// AppsReportingUsage returns the applications of every namespace whose
// usage reports are on. It reads every application record, once: the
// controller's sweep calls it every few minutes, which at a thousand
// applications costs one range read of a few megabytes.
func (r *Registry) AppsReportingUsage(ctx context.Context) ([]*App, error) {
	apps, err := r.ListApps(ctx, "")
	if err != nil {
		return nil, err
	}
	out := apps[:0]
	for _, a := range apps {
		if a.UsageReport {
			out = append(out, a)
		}
	}
	return out, nil
}
