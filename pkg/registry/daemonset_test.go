package registry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A daemonset's desired count is the scheduler's (SetDaemonsetStatus):
// it is created Deploying with none, a new version keeps the count, and
// scaling it is refused; an application's status leaves its count alone.
func TestDaemonsetDesiredCount(t *testing.T) {
	ctx := context.Background()
	r, _ := newRegistry(t)
	d := manifesttest.Daemonset()
	app := mustCreate(t, r, d)
	if app.Instances != 0 || app.State != registry.AppDeploying {
		t.Fatalf("created %d instances, %s; want 0, Deploying", app.Instances, app.State)
	}
	three := 3
	if err := r.SetAppStatuses(ctx, []registry.AppStatusChange{{Namespace: app.Namespace, Name: app.Name, State: registry.AppRunning, Desired: &three}}); err != nil {
		t.Fatal(err)
	}
	next := manifesttest.Daemonset()
	next.Spec.Template.Spec.Containers[0].Image = "logs:v2"
	updated, err := r.UpdateApp(ctx, next, 0)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Instances != 3 || updated.Version != 2 {
		t.Errorf("after an update: version %d, %d instances; want 2, 3", updated.Version, updated.Instances)
	}
	if _, err := r.ScaleApp(ctx, app.Namespace, app.Name, 5, false); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("scale: %v, want ErrInvalidArgument", err)
	}

	proc := mustCreate(t, r, process(2))
	seven := 7
	if _, err := r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: proc.Namespace, Name: proc.Name, State: registry.AppRunning, Desired: &seven}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.GetApp(ctx, proc.Namespace, proc.Name); got.Instances != 2 {
		t.Errorf("a process's count became %d, want 2", got.Instances)
	}
}
