package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// One embedded etcd for the test binary; each test uses its own prefix.
var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

// newStore opens a store on a fresh prefix of the shared etcd.
func newStore(t testing.TB) (*store.Store, string) {
	t.Helper()
	prefix := shared.Prefix("registry-test")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: shared.Etcd.Endpoints(), Prefix: prefix, Sealer: shared.Sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, prefix
}

func newRegistry(t *testing.T) (*registry.Registry, *store.Store) {
	t.Helper()
	st, _ := newStore(t)
	return registry.New(st, time.Now), st
}

// process returns a valid process manifest "gamesvc" in ns-a with
// instance instances.
func process(instances int) *manifest.Process {
	p := manifesttest.Process()
	p.Spec.Instance = instances
	return p
}

var ctx = context.Background()

func mustCreate(t *testing.T, r *registry.Registry, obj manifest.Object) *registry.App {
	t.Helper()
	app, err := r.CreateApp(ctx, obj)
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	return app
}

// putTaskGroup stores the record of instance 0 of an application, as the
// scheduler does.
func putTaskGroup(t *testing.T, st *store.Store, ns, app string) {
	t.Helper()
	key, err := store.Key(store.KindTaskGroup, ns, app, "0")
	if err != nil {
		t.Fatal(err)
	}
	tg := registry.TaskGroup{ID: "0." + app + "." + ns + ".1", Namespace: ns, App: app, State: "TASK_RUNNING"}
	if _, err := store.CreateJSON(ctx, st, key, tg); err != nil {
		t.Fatal(err)
	}
}

func versionNumbers(t *testing.T, r *registry.Registry, ns, name string) []uint64 {
	t.Helper()
	versions, err := r.AppVersions(ctx, ns, name)
	if err != nil {
		t.Fatalf("AppVersions: %v", err)
	}
	out := []uint64{}
	for _, v := range versions {
		out = append(out, v.Version)
	}
	return out
}

// Applications are stored with their version history: CreateApp stores
// version 1 and refuses a second create.
func TestCreateApp(t *testing.T) {
	r, _ := newRegistry(t)
	app := mustCreate(t, r, process(3))
	if app.Version != 1 || app.Instances != 3 || app.State != registry.AppDeploying || app.Revision == 0 {
		t.Errorf("created %+v", app)
	}
	if _, err := r.CreateApp(ctx, process(3)); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("second CreateApp = %v, want ErrAlreadyExists", err)
	}
	idle := process(0)
	idle.Metadata.Name = "idle"
	if app := mustCreate(t, r, idle); app.State != registry.AppRunning {
		t.Errorf("an application of 0 instances is %q, want Running", app.State)
	}
	if _, err := r.CreateApp(ctx, manifesttest.ConfigMap()); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("CreateApp(configmap) = %v, want ErrInvalidArgument", err)
	}
	if got := versionNumbers(t, r, "ns-a", "gamesvc"); !slices.Equal(got, []uint64{1}) {
		t.Errorf("versions = %v, want [1]", got)
	}
}

// Writes use etcd revisions for optimistic concurrency (a conflicting
// write gets a conflict error, not a lost update): two UpdateApps based on
// the same revision, at once: exactly one wins.
func TestUpdateAppSameRevisionOneWins(t *testing.T) {
	r, _ := newRegistry(t)
	mustCreate(t, r, process(1))
	const rounds = 10
	for round := range rounds {
		current, err := r.GetApp(ctx, "ns-a", "gamesvc")
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = r.UpdateApp(ctx, process(10*round+i), current.Revision)
			}()
		}
		wg.Wait()
		won, conflicted := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, errdefs.ErrConflict):
				conflicted++
			default:
				t.Errorf("round %d: UpdateApp = %v", round, err)
			}
		}
		if won != 1 || conflicted != 1 {
			t.Fatalf("round %d: %d won and %d conflicted, want 1 and 1 (errors %v)", round, won, conflicted, errs)
		}
	}
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if app.Version != rounds+1 {
		t.Errorf("version = %d, want %d: one per round", app.Version, rounds+1)
	}
	if got := versionNumbers(t, r, "ns-a", "gamesvc"); len(got) != rounds+1 {
		t.Errorf("history %v, want %d versions", got, rounds+1)
	}
}

// UpdateApp refuses a stale revision, a missing application, a kind change
// and an application being deleted.
func TestUpdateAppRefusals(t *testing.T) {
	r, st := newRegistry(t)
	first := mustCreate(t, r, process(1))
	if _, err := r.UpdateApp(ctx, process(2), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateApp(ctx, process(3), first.Revision); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("UpdateApp at a stale revision = %v, want ErrConflict", err)
	}
	other := process(1)
	other.Metadata.Name = "other"
	if _, err := r.UpdateApp(ctx, other, 0); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("UpdateApp of a missing application = %v, want ErrNotFound", err)
	}
	app := manifesttest.Application()
	app.Metadata.Name = "gamesvc"
	if _, err := r.UpdateApp(ctx, app, 0); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("UpdateApp changing the kind = %v, want ErrInvalidArgument", err)
	}
	putTaskGroup(t, st, "ns-a", "gamesvc")
	if _, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateApp(ctx, process(4), 0); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("UpdateApp while deleting = %v, want ErrConflict", err)
	}
	if _, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 4, false); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("ScaleApp while deleting = %v, want ErrConflict", err)
	}
	if got := versionNumbers(t, r, "ns-a", "gamesvc"); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("history %v after the refusals, want [1 2]", got)
	}
}

// writeOnFirstCall is a clock that, the first time it is read, runs
// interfere: registry writes read the clock between reading the record
// and writing it back, so interfere lands exactly in that window.
func writeOnFirstCall(interfere func()) func() time.Time {
	var once sync.Once
	return func() time.Time {
		once.Do(interfere)
		return time.Now()
	}
}

// ScaleApp (and every retrying write) re-reads and re-applies when another
// writer changed the record in between, so neither write is lost.
func TestScaleAppRetriesOnConcurrentWrite(t *testing.T) {
	st, _ := newStore(t)
	other := registry.New(st, time.Now)
	mustCreate(t, other, process(3))
	interfered := false
	r := registry.New(st, writeOnFirstCall(func() {
		if _, err := other.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: "gamesvc", State: registry.AppAbnormal, Message: "no offer fits"}); err != nil {
			t.Errorf("interfering SetAppStatus: %v", err)
		}
		interfered = true
	}))
	app, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 7, false)
	if err != nil {
		t.Fatalf("ScaleApp: %v", err)
	}
	if !interfered {
		t.Fatal("the clock was never read: the test did not interfere")
	}
	got, err := other.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if got.Instances != 7 || got.State != registry.AppAbnormal || got.Message != "no offer fits" || got.Revision != app.Revision {
		t.Errorf("after both writes: %+v, want 7 instances and the Abnormal status", got)
	}
	if got.Version != 1 {
		t.Errorf("scaling made version %d, want 1", got.Version)
	}
}

// Many concurrent ScaleApp and SetAppStatus calls all succeed, each
// landing exactly one write.
func TestConcurrentScaleAndStatusLoseNothing(t *testing.T) {
	st, _ := newStore(t)
	r := registry.New(st, time.Now)
	mustCreate(t, r, process(3))
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for i := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := r.ScaleApp(ctx, "ns-a", "gamesvc", 10+i, false)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: "gamesvc", State: registry.AppRunning, Message: fmt.Sprint(i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent write: %v", err)
		}
	}
	key, err := store.Key(store.KindApplication, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	entry, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if entry.Version != 1+2*writers {
		t.Errorf("the record was written %d times, want %d: one per call", entry.Version-1, 2*writers)
	}
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if app.Instances < 10 || app.Instances >= 10+writers || app.State != registry.AppRunning {
		t.Errorf("final %+v", app)
	}
}

// "deletion wins over a late status": SetAppStatus does not take an
// application out of Deleting.
func TestSetAppStatusDoesNotOverrideDeleting(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(2))
	putTaskGroup(t, st, "ns-a", "gamesvc")
	deleting, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false)
	if err != nil {
		t.Fatal(err)
	}
	if deleting == nil || deleting.State != registry.AppDeleting {
		t.Fatalf("DeleteApp with a task group = %+v, want it marked Deleting", deleting)
	}
	for _, state := range []registry.AppState{registry.AppRunning, registry.AppDeploying, registry.AppAbnormal} {
		app, err := r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: "gamesvc", State: state, Message: "late"})
		if err != nil {
			t.Fatal(err)
		}
		if app.State != registry.AppDeleting {
			t.Errorf("SetAppStatus(%s) answered state %q, want Deleting", state, app.State)
		}
	}
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	if app.State != registry.AppDeleting || app.Message == "late" {
		t.Errorf("stored %q %q, want Deleting without the late message", app.State, app.Message)
	}
	app, err = r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: "gamesvc", State: registry.AppDeleting, Message: "killing 1 instance"})
	if err != nil || app.Message != "killing 1 instance" {
		t.Errorf("SetAppStatus(Deleting) = %+v, %v; want the message recorded", app, err)
	}
}

func markDeleting(t *testing.T, r *registry.Registry) {
	t.Helper()
	if _, err := r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: "gamesvc", State: registry.AppDeleting, Message: ""}); err != nil {
		t.Fatal(err)
	}
}

// POST → DELETE → re-POST of the same app must not lose the acknowledged
// create: a removal decided for the deleted application, arriving late
// (the scheduler's, a second DELETE's), finds the application created
// again and leaves it, its history and its instances alone.
func TestLateRemovalLeavesTheRecreatedApp(t *testing.T) {
	r, _ := newRegistry(t)
	mustCreate(t, r, process(1))
	if app, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); app != nil || err != nil {
		t.Fatalf("DeleteApp without instances = %+v, %v; want it removed", app, err)
	}
	mustCreate(t, r, process(2))
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("late RemoveApp = %v, want ErrNotFound", err)
	}
	// Deleting, with an instance the scheduler has yet to kill: still not
	// removed (its instances would be orphaned).
	if err := r.PutTaskGroup(ctx, &registry.TaskGroup{ID: "ns-a_gamesvc_0_1", Namespace: "ns-a", App: "gamesvc"}); err != nil {
		t.Fatal(err)
	}
	if app, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil || app == nil || app.State != registry.AppDeleting {
		t.Fatalf("DeleteApp with an instance = %+v, %v; want it marked", app, err)
	}
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("RemoveApp with an instance left = %v, want ErrNotFound", err)
	}
	app, err := r.GetApp(ctx, "ns-a", "gamesvc")
	if err != nil || app.Version != 1 {
		t.Fatalf("the re-created application: %+v, %v", app, err)
	}
	if versions, err := r.AppVersions(ctx, "ns-a", "gamesvc"); err != nil || len(versions) != 1 {
		t.Errorf("its history: %d versions, %v; want 1", len(versions), err)
	}
}

// Create, delete and create again, with a stale remover racing them: every
// create acknowledged and not deleted since is there.
func TestRecreateRacingARemoverLosesNothing(t *testing.T) {
	r, _ := newRegistry(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = r.RemoveApp(ctx, "ns-a", "gamesvc")
			}
		}
	})
	for i := range 40 {
		mustCreate(t, r, process(1))
		if _, err := r.GetApp(ctx, "ns-a", "gamesvc"); err != nil {
			t.Fatalf("round %d: the acknowledged create is gone: %v", i, err)
		}
		if _, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil {
			t.Fatalf("round %d: DeleteApp: %v", i, err)
		}
	}
	mustCreate(t, r, process(1))
	close(stop)
	wg.Wait()
	if _, err := r.GetApp(ctx, "ns-a", "gamesvc"); err != nil {
		t.Fatalf("the last create is gone: %v", err)
	}
}

// DeleteApp without task groups removes the application and its history
// at once; RemoveApp finishes a deletion that crashed between deleting the
// history and the record.
func TestRemoveAppAfterCrash(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(1))
	for i := 2; i <= 4; i++ {
		if _, err := r.UpdateApp(ctx, process(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	markDeleting(t, r)
	// The crash: some of the history is gone, the record is still there.
	for _, v := range []uint64{1, 3} {
		key, err := store.AppVersionKey("ns-a", "gamesvc", v)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, key, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); err != nil {
		t.Fatalf("RemoveApp after a partial removal: %v", err)
	}
	if _, err := r.GetApp(ctx, "ns-a", "gamesvc"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("GetApp after RemoveApp = %v, want ErrNotFound", err)
	}
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("second RemoveApp = %v, want ErrNotFound", err)
	}
	if entries, err := st.List(ctx, ""); err != nil || len(entries) != 0 {
		t.Errorf("left behind %d keys (%v)", len(entries), err)
	}

	// The whole history gone, the record left: RemoveApp still finishes.
	mustCreate(t, r, process(1))
	markDeleting(t, r)
	key, err := store.AppVersionKey("ns-a", "gamesvc", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveApp(ctx, "ns-a", "gamesvc"); err != nil {
		t.Fatalf("RemoveApp without history: %v", err)
	}
	if entries, err := st.List(ctx, ""); err != nil || len(entries) != 0 {
		t.Errorf("left behind %d keys (%v)", len(entries), err)
	}
}

// DeleteApp marks the application Deleting before it removes anything, so
// that a crash half way (RemoveApp's comment) leaves a record the
// scheduler or the next DELETE finishes, not an application that looks
// alive with its history gone.
func TestDeleteAppMarksBeforeRemoving(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(1))
	updated, err := r.UpdateApp(ctx, process(2), 0)
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := st.Watch(watchCtx, "", updated.Revision+1)
	if err != nil {
		t.Fatal(err)
	}
	if app, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil || app != nil {
		t.Fatalf("DeleteApp without task groups = %+v, %v; want nil, nil (removed)", app, err)
	}
	var seen []string
	timeout := time.After(10 * time.Second)
	for len(seen) < 4 {
		select {
		case ev := <-events:
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			what := ev.Type.String() + " " + ev.Entry.Key
			if ev.Type == store.EventPut && strings.Contains(string(ev.Entry.Value), `"state":"Deleting"`) {
				what += " (Deleting)"
			}
			seen = append(seen, what)
		case <-timeout:
			t.Fatalf("events so far %q", seen)
		}
	}
	want := []string{
		"put apps/ns-a/gamesvc (Deleting)",
		"delete appversions/ns-a/gamesvc/00000000000000000001",
		"delete appversions/ns-a/gamesvc/00000000000000000002",
		"delete apps/ns-a/gamesvc",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("DeleteApp wrote\n %q\nwant\n %q", seen, want)
	}
	if _, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("DeleteApp of a missing application = %v, want ErrNotFound", err)
	}
}

// The state a crashed deletion leaves (record marked Deleting, history
// gone): no update slips in, and DELETE again finishes the job.
func TestDeleteAppFinishesAfterCrash(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(1))
	putTaskGroup(t, st, "ns-a", "gamesvc")
	if _, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil {
		t.Fatal(err)
	}
	key, err := store.AppVersionKey("ns-a", "gamesvc", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	tgKey, err := store.Key(store.KindTaskGroup, "ns-a", "gamesvc", "0")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, tgKey, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateApp(ctx, process(2), 0); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("UpdateApp after the crash = %v, want ErrConflict (being deleted)", err)
	}
	if app, err := r.DeleteApp(ctx, "ns-a", "gamesvc", false); err != nil || app != nil {
		t.Errorf("DeleteApp again = %+v, %v; want nil, nil", app, err)
	}
	if entries, err := st.List(ctx, ""); err != nil || len(entries) != 0 {
		t.Errorf("left behind %d keys (%v)", len(entries), err)
	}
}

// Applications with version history: the history keeps exactly
// VersionsKept versions, the newest, pruned in the write that adds one.
func TestVersionPruningKeepsExactlyVersionsKept(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(1))
	total := registry.VersionsKept + 5
	for i := 2; i <= total; i++ {
		if _, err := r.UpdateApp(ctx, process(i), 0); err != nil {
			t.Fatalf("UpdateApp %d: %v", i, err)
		}
		got := versionNumbers(t, r, "ns-a", "gamesvc")
		if want := min(i, registry.VersionsKept); len(got) != want || got[len(got)-1] != uint64(i) {
			t.Fatalf("after version %d the history is %v, want the newest %d", i, got, want)
		}
	}
	prefix, err := store.Prefix(store.KindAppVersion, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != registry.VersionsKept {
		t.Errorf("%d version keys stored, want %d", len(entries), registry.VersionsKept)
	}
	versions, err := r.AppVersions(ctx, "ns-a", "gamesvc")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range versions {
		want := uint64(total - registry.VersionsKept + 1 + i)
		m, err := manifest.Parse(v.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if v.Version != want || m.(*manifest.Process).Spec.Instance != int(want) {
			t.Errorf("versions[%d]: version %d instance %d, want %d", i, v.Version, m.(*manifest.Process).Spec.Instance, want)
		}
	}
}

// A history with a gap where pruning would delete (a version already
// removed) does not stop later versions.
func TestPruningToleratesMissingVersions(t *testing.T) {
	r, st := newRegistry(t)
	mustCreate(t, r, process(1))
	for i := 2; i <= registry.VersionsKept; i++ {
		if _, err := r.UpdateApp(ctx, process(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []uint64{1, 2} {
		key, err := store.AppVersionKey("ns-a", "gamesvc", v)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, key, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := registry.VersionsKept + 1; i <= registry.VersionsKept+3; i++ {
		if _, err := r.UpdateApp(ctx, process(i), 0); err != nil {
			t.Fatalf("UpdateApp to version %d over a gap: %v", i, err)
		}
	}
	got := versionNumbers(t, r, "ns-a", "gamesvc")
	if len(got) != registry.VersionsKept || got[0] != 4 {
		t.Errorf("history %v, want versions 4..%d", got, registry.VersionsKept+3)
	}
}

// Deployments, configmaps and secrets are stored with optimistic
// concurrency too.
func TestPutObject(t *testing.T) {
	r, _ := newRegistry(t)
	cm := manifesttest.ConfigMap()
	created, err := r.PutObject(ctx, cm, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.PutObject(ctx, cm, -1); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("second create = %v, want ErrAlreadyExists", err)
	}
	updated, err := r.PutObject(ctx, cm, created.Revision)
	if err != nil {
		t.Fatalf("update at the current revision: %v", err)
	}
	if !updated.CreatedAt.Equal(created.CreatedAt) || updated.Revision <= created.Revision {
		t.Errorf("update: createdAt %v revision %d, want %v and > %d", updated.CreatedAt, updated.Revision, created.CreatedAt, created.Revision)
	}
	if _, err := r.PutObject(ctx, cm, created.Revision); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("update at a stale revision = %v, want ErrConflict", err)
	}
	if _, err := r.PutObject(ctx, cm, 0); err != nil {
		t.Errorf("update at whatever revision: %v", err)
	}
	missing := manifesttest.ConfigMap()
	missing.Metadata.Name = "missing"
	if _, err := r.PutObject(ctx, missing, 0); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("update of a missing object = %v, want ErrNotFound", err)
	}
	if _, err := r.PutObject(ctx, manifesttest.Process(), -1); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("PutObject(process) = %v, want ErrInvalidArgument", err)
	}
	if err := r.DeleteObject(ctx, manifest.KindConfigMap, "ns-a", "template-configmap"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteObject(ctx, manifest.KindConfigMap, "ns-a", "template-configmap"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
	if _, err := r.GetObject(ctx, manifest.KindProcess, "ns-a", "x"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("GetObject(process) = %v, want ErrInvalidArgument", err)
	}
}

// Configmap and secret references resolve in the manifest's own
// namespace only.
func TestResolverIsPerNamespace(t *testing.T) {
	r, _ := newRegistry(t)
	if _, err := r.PutObject(ctx, manifesttest.ConfigMap(), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PutObject(ctx, manifesttest.Secret(), -1); err != nil {
		t.Fatal(err)
	}
	res, err := r.Resolver(ctx, "ns-a")
	if err != nil {
		t.Fatal(err)
	}
	if errs := manifesttest.Process().Validate(res); len(errs) != 0 {
		t.Errorf("in ns-a: %q, want the references resolved", errs.Messages())
	}
	if s, ok := res.Secret("ns-a", "my-secret"); !ok || s.Datas["abc"].Content != "c2VjcmV0" {
		t.Errorf("Secret(my-secret) = %+v, %v", s, ok)
	}
	other, err := r.Resolver(ctx, "ns-b")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := other.ConfigMap("ns-b", "template-configmap"); ok {
		t.Error("ns-b resolves ns-a's configmap")
	}
	p := manifesttest.Process()
	p.Metadata.Namespace = "ns-b"
	if errs := p.Validate(other); len(errs) != 2 {
		t.Errorf("in ns-b: %q, want the configmap and the secret missing", errs.Messages())
	}
}

// The store seals at rest exactly the fields a manifest redacts.
func TestStoreSealsEveryCredentialField(t *testing.T) {
	if !slices.Equal(slices.Sorted(slices.Values(store.SealedMembers)), slices.Sorted(slices.Values(manifest.CredentialFields))) {
		t.Errorf("store.SealedMembers %q, manifest.CredentialFields %q: want the same names", store.SealedMembers, manifest.CredentialFields)
	}
	if !slices.Equal(slices.Sorted(slices.Values(store.SealedMapMembers)), slices.Sorted(slices.Values(manifest.CredentialMaps))) {
		t.Errorf("store.SealedMapMembers %q, manifest.CredentialMaps %q: want the same names", store.SealedMapMembers, manifest.CredentialMaps)
	}
}

// Secret values are encrypted at rest: the raw etcd value holds
// neither the content nor the path.
func TestSecretsAreSealedAtRest(t *testing.T) {
	r, prefix := func() (*registry.Registry, string) {
		st, prefix := newStore(t)
		return registry.New(st, time.Now), prefix
	}()
	s := manifesttest.Secret()
	s.Datas["abc"] = manifest.SecretData{Path: "/vault/plain-path", Content: "dG9wLXNlY3JldC12YWx1ZQ=="}
	if _, err := r.PutObject(ctx, s, -1); err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: shared.Etcd.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(ctx, prefix+"secrets/ns-a/my-secret")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("raw secret key: %d values", len(resp.Kvs))
	}
	raw := string(resp.Kvs[0].Value)
	for _, clear := range []string{"dG9wLXNlY3JldC12YWx1ZQ==", "/vault/plain-path", "my-secret"} {
		if strings.Contains(raw, clear) {
			t.Errorf("raw etcd value holds %q in clear", clear)
		}
	}
	o, err := r.GetObject(ctx, manifest.KindSecret, "ns-a", "my-secret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(o.Spec), "dG9wLXNlY3JldC12YWx1ZQ==") {
		t.Errorf("the registry does not read the content back: %s", o.Spec)
	}
}

// Once DeleteApp has marked an application Deleting, the scheduler may see
// it and remove it, or record a status, before DeleteApp's own removal:
// DeleteApp still reports the application removed, whoever finished it.
func TestDeleteAppRacesTheScheduler(t *testing.T) {
	r, _ := newRegistry(t)
	racers := map[string]func(name string) error{
		"RemoveApp": func(name string) error { return r.RemoveApp(ctx, "ns-a", name) },
		"SetAppStatus": func(name string) error {
			_, err := r.SetAppStatus(ctx, registry.AppStatusChange{Namespace: "ns-a", Name: name, State: registry.AppDeleting, Message: "killing"})
			return err
		},
	}
	for racer, race := range racers {
		for i := range 5 {
			name := fmt.Sprintf("game-%s-%d", strings.ToLower(racer), i)
			p := process(1)
			p.Metadata.Name = name
			mustCreate(t, r, p)
			done := make(chan error, 1)
			go func() {
				// The scheduler: act as soon as the application is Deleting.
				for {
					app, err := r.GetApp(ctx, "ns-a", name)
					if errors.Is(err, errdefs.ErrNotFound) {
						done <- nil
						return
					}
					if err != nil {
						done <- err
						return
					}
					if app.State == registry.AppDeleting {
						if err := race(name); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
							done <- fmt.Errorf("%s: %w", racer, err)
							return
						}
					}
				}
			}()
			if app, err := r.DeleteApp(ctx, "ns-a", name, false); err != nil || app != nil {
				t.Errorf("%s race %d: DeleteApp = %+v, %v; want nil, nil", racer, i, app, err)
			}
			if err := <-done; err != nil {
				t.Errorf("%s race %d: %v", racer, i, err)
			}
			if _, err := r.GetApp(ctx, "ns-a", name); !errors.Is(err, errdefs.ErrNotFound) {
				t.Errorf("%s race %d: GetApp after DeleteApp = %v, want ErrNotFound", racer, i, err)
			}
		}
	}
}

// The sweep owed an agent survives a scheduler restart: it is
// stored whole, listed by agent, and deleted when done (twice is fine).
func TestSweepRecords(t *testing.T) {
	r, _ := newRegistry(t)
	ctx := context.Background()
	since := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	want := &registry.Sweep{AgentID: "5ee7c0de-S1", Owed: []string{"container"}, Running: map[string]string{"process": "bcs-sweep.process.1.1.0"},
		HeldPorts: []uint32{31008}, Reason: "executor x died", Since: since, Attempts: 2, NotBefore: since.Add(10 * time.Second)}
	if err := r.PutSweep(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := r.PutSweep(ctx, &registry.Sweep{AgentID: "5ee7c0de-S0", Owed: []string{"process"}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.ListSweeps(ctx)
	if err != nil || len(got) != 2 || got[0].AgentID != "5ee7c0de-S0" {
		t.Fatalf("ListSweeps = %+v, %v", got, err)
	}
	s := got[1]
	if s.Running["process"] != "bcs-sweep.process.1.1.0" || s.HeldPorts[0] != 31008 || !s.NotBefore.Equal(want.NotBefore) || s.Attempts != 2 || s.Revision == 0 {
		t.Errorf("stored %+v", s)
	}
	for range 2 {
		if err := r.DeleteSweep(ctx, "5ee7c0de-S1"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := r.ListSweeps(ctx); len(got) != 1 {
		t.Errorf("after delete: %+v", got)
	}
	if err := r.PutSweep(ctx, &registry.Sweep{AgentID: "a/b"}); err == nil {
		t.Error("an agent ID with a slash was stored")
	}
}

// SetAppStatuses stores a step's application statuses in a few
// transactions; an application scaled between its read and its write
// keeps both changes; one removed meanwhile is skipped.
func TestSetAppStatuses(t *testing.T) {
	st, _ := newStore(t)
	other := registry.New(st, time.Now)
	const apps = 200
	var changes []registry.AppStatusChange
	for i := range apps {
		p := process(1)
		p.Metadata.Name = fmt.Sprintf("app-%03d", i)
		mustCreate(t, other, p)
		changes = append(changes, registry.AppStatusChange{Namespace: "ns-a", Name: p.Metadata.Name, State: registry.AppRunning, Message: fmt.Sprint(i)})
	}
	changes = append(changes, registry.AppStatusChange{Namespace: "ns-a", Name: "gone", State: registry.AppRunning})
	before, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Read first, then scaled by someone else, then written.
	r := registry.New(st, writeOnFirstCall(func() {
		if _, err := other.ScaleApp(ctx, "ns-a", "app-150", 5, false); err != nil {
			t.Errorf("interfering ScaleApp: %v", err)
		}
	}))
	if err := r.SetAppStatuses(ctx, changes); err != nil {
		t.Fatal(err)
	}
	after, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One revision for the scale, two transactions of up to 127, and the
	// statuses of the transaction that met the scale set one by one.
	if writes := after - before; writes > 2+1+apps-127 {
		t.Errorf("%d store revisions for %d statuses, want a few transactions", writes, apps)
	}
	for i := range apps {
		app, err := other.GetApp(ctx, "ns-a", fmt.Sprintf("app-%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		if app.State != registry.AppRunning || app.Message != fmt.Sprint(i) {
			t.Errorf("%s: %s %q, want Running %q", app.Name, app.State, app.Message, fmt.Sprint(i))
		}
		if i == 150 && app.Instances != 5 {
			t.Errorf("%s: %d instances, want the scale to 5 kept", app.Name, app.Instances)
		}
	}
	if _, err := other.GetApp(ctx, "ns-a", "gone"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("the status of a missing application made it: %v", err)
	}
}
