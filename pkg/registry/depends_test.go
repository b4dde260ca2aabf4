package registry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// dependencyPod is the record the scheduler asks for: the depends
// fixture's pod on host-1 with users.
func dependencyPod(t *testing.T, startCmd string, users int) *registry.App {
	t.Helper()
	d := manifesttest.Depends()
	d.Spec.Template.Spec.Processes[0].StartCmd = startCmd
	spec, err := json.Marshal(d.Pod(manifest.ObjectMeta{Name: "logagent-host-1-abc123", Namespace: "ns-a"}, "host-1"))
	if err != nil {
		t.Fatal(err)
	}
	return &registry.App{Namespace: "ns-a", Name: "logagent-host-1-abc123", Spec: spec, DependencyPod: &registry.DependencyPod{
		DependsNamespace: "ns-a", DependsName: "logagent", Node: "host-1", Policy: manifest.DependsPerNode, Users: users}}
}

// The scheduler creates a dependency pod, updates it (a new
// version only when its spec changed) and deletes it; operators cannot
// change it through the application calls.
func TestDependencyPodRecords(t *testing.T) {
	r, _ := newRegistry(t)
	if err := r.PutDependencyPod(ctx, dependencyPod(t, "./logagent", 1)); err != nil {
		t.Fatal(err)
	}
	app, err := r.GetApp(ctx, "ns-a", "logagent-host-1-abc123")
	if err != nil {
		t.Fatal(err)
	}
	if app.Kind != manifest.KindDeployment || app.Version != 1 || app.Instances != 1 || app.DependencyPod.Users != 1 || app.DependencyPod.Node != "host-1" {
		t.Fatalf("created %+v %+v", app, app.DependencyPod)
	}
	if err := r.PutDependencyPod(ctx, dependencyPod(t, "./logagent", 2)); err != nil {
		t.Fatal(err)
	}
	if app, _ = r.GetApp(ctx, "ns-a", "logagent-host-1-abc123"); app.Version != 1 || app.DependencyPod.Users != 2 {
		t.Errorf("users changed: version %d users %d, want version 1 users 2", app.Version, app.DependencyPod.Users)
	}
	if err := r.PutDependencyPod(ctx, dependencyPod(t, "./logagent --v2", 2)); err != nil {
		t.Fatal(err)
	}
	if app, _ = r.GetApp(ctx, "ns-a", "logagent-host-1-abc123"); app.Version != 2 {
		t.Errorf("spec changed: version %d, want 2", app.Version)
	}

	for name, call := range map[string]func() error{
		"update": func() error {
			_, err := r.UpdateApp(ctx, manifesttest.Depends().Pod(manifest.ObjectMeta{Name: app.Name, Namespace: "ns-a"}, ""), 0)
			return err
		},
		"scale":   func() error { _, err := r.ScaleApp(ctx, "ns-a", app.Name, 3, false); return err },
		"delete":  func() error { _, err := r.DeleteApp(ctx, "ns-a", app.Name, true); return err },
		"restart": func() error { _, err := r.RestartApp(ctx, "ns-a", app.Name); return err },
	} {
		if err := call(); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("%s of a dependency pod: %v, want a conflict", name, err)
		}
	}
	if app, _ = r.GetApp(ctx, "ns-a", app.Name); app.Version != 2 || app.Instances != 1 || app.State == registry.AppDeleting {
		t.Errorf("after the refusals: %+v", app)
	}

	// The scheduler's delete: no instances, so it is gone at once.
	if err := r.DeleteDependencyPod(ctx, "ns-a", app.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetApp(ctx, "ns-a", app.Name); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("after DeleteDependencyPod: %v", err)
	}
}

// A name taken by an operator's application is never overwritten or
// deleted as a dependency pod.
func TestDependencyPodLeavesOtherApplicationsAlone(t *testing.T) {
	r, _ := newRegistry(t)
	p := manifesttest.Process()
	p.Metadata.Name = "logagent-host-1-abc123"
	mustCreate(t, r, p)
	if err := r.PutDependencyPod(ctx, dependencyPod(t, "./logagent", 1)); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("PutDependencyPod over an application: %v, want a conflict", err)
	}
	if err := r.DeleteDependencyPod(ctx, "ns-a", p.Metadata.Name); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("DeleteDependencyPod of an application: %v, want a conflict", err)
	}
	app, err := r.GetApp(ctx, "ns-a", p.Metadata.Name)
	if err != nil || app.Kind != manifest.KindProcess || app.DependencyPod != nil || app.State == registry.AppDeleting {
		t.Errorf("the application after: %+v, %v", app, err)
	}
}

// A reference may name a depends object of another namespace: the
// resolver knows them all.
func TestResolverKnowsDependsOfEveryNamespace(t *testing.T) {
	r, _ := newRegistry(t)
	infra := manifesttest.Depends()
	infra.Metadata.Namespace = "infra"
	if _, err := r.PutObject(ctx, infra, -1); err != nil {
		t.Fatal(err)
	}
	res, err := r.Resolver(ctx, "ns-a")
	if err != nil {
		t.Fatal(err)
	}
	p := manifesttest.Process()
	p.Spec.Template.Spec.Processes[0].ConfigMaps, p.Spec.Template.Spec.Processes[0].Secrets = nil, nil
	p.Spec.Template.Spec.Depends = []manifest.DependsRef{{Name: "logagent", Namespace: "infra", Policy: manifest.DependsPerNode},
		{Name: "logagent", Policy: manifest.DependsPerNode}}
	errs := p.Validate(res)
	if want := []string{`spec.template.spec.depends[1].name: depends "logagent" not found in namespace "ns-a"`}; len(errs) != 1 || errs.Messages()[0] != want[0] {
		t.Errorf("Validate: %q, want %q", errs.Messages(), want)
	}
}

// A dependency pod's application is named after its depends object and
// node, always a valid and distinct name, in the namespace it serves.
func TestDependencyPodApp(t *testing.T) {
	long := strings.Repeat("logagent", 8)[:manifest.MaxNameLength]
	tests := []struct {
		pod    registry.DependencyPod
		wantNS string
		prefix string
	}{
		{registry.DependencyPod{DependsNamespace: "ns-a", DependsName: "logagent", Node: "host-1", Policy: manifest.DependsPerNode},
			"ns-a", "logagent-host-1-"},
		{registry.DependencyPod{DependsNamespace: "infra", DependsName: "dns", Node: "Node_7.Example.COM", Policy: manifest.DependsPerNamespace, ServedNamespace: "ns-b"},
			"ns-b", "dns-node-7-example-com-"},
		{registry.DependencyPod{DependsNamespace: "ns-a", DependsName: long, Node: "10.0.0.1", Policy: manifest.DependsPerNode},
			"ns-a", long[:manifest.MaxNameLength-9] + "-"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		ns, name := tt.pod.App()
		if ns != tt.wantNS || !strings.HasPrefix(name, tt.prefix) || len(name) > manifest.MaxNameLength {
			t.Errorf("%+v: %s/%s, want %s/%s…", tt.pod, ns, name, tt.wantNS, tt.prefix)
		}
		pod := manifesttest.Depends().Pod(manifest.ObjectMeta{Namespace: ns, Name: name}, tt.pod.Node)
		if errs := pod.Validate(nil); len(errs) > 0 {
			t.Errorf("%s: %q", name, errs.Messages())
		}
		seen[ns+"/"+name] = true
	}
	// What differs only after sanitising, or only in the namespace served,
	// is another pod.
	a := registry.DependencyPod{DependsNamespace: "ns-a", DependsName: "logagent", Node: "a.b"}
	b := registry.DependencyPod{DependsNamespace: "ns-a", DependsName: "logagent", Node: "a-b"}
	c := registry.DependencyPod{DependsNamespace: "ns-b", DependsName: "logagent", Node: "a.b"}
	for _, p := range []registry.DependencyPod{a, b, c} {
		ns, name := p.App()
		seen[ns+"/"+name] = true
	}
	_, an := a.App()
	_, cn := c.App()
	if len(seen) != 6 || an == cn {
		t.Errorf("names collide: %v", seen)
	}
	later := a
	later.IdleSince = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if a.Equal(later) || !later.Equal(registry.DependencyPod{DependsNamespace: "ns-a", DependsName: "logagent", Node: "a.b",
		IdleSince: later.IdleSince.In(time.FixedZone("x", 3600))}) {
		t.Error("Equal compares the idle time as an instant")
	}
}
