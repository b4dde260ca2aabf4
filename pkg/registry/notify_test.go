package registry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// A callback URL is checked, shown and logged redacted, and
// stored apart, sealed; the same URL registered again changes its event
// filter, keeps its ID and registration time.
func TestNotifyCallbacks(t *testing.T) {
	r, _ := newRegistry(t)
	const raw = "https://bot:hunter2@hooks.example/notify?token=s3cr3t&channel=ops"
	u, err := registry.ParseCallbackURL("callback", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Redacted(); got != "https://redacted@hooks.example/notify?channel=redacted&token=redacted" {
		t.Errorf("redacted %q", got)
	}
	cb, created, err := r.PutNotifyCallback(ctx, u, nil)
	if err != nil || !created {
		t.Fatalf("PutNotifyCallback = %v, created %v", err, created)
	}
	again, created, err := r.PutNotifyCallback(ctx, u, []registry.NoticeType{registry.NoticeFlapping})
	if err != nil || created || again.ID != cb.ID || !again.CreatedAt.Equal(cb.CreatedAt) {
		t.Fatalf("registering again = %+v, created %v, %v; want the same callback", again, created, err)
	}
	list, err := r.ListNotifyCallbacks(ctx)
	if err != nil || len(list) != 1 || list[0].Takes(registry.NoticeExit) || !list[0].Takes(registry.NoticeFlapping) {
		t.Fatalf("ListNotifyCallbacks = %+v, %v; want one taking flapping only", list, err)
	}
	if strings.Contains(list[0].URL, "hunter2") || strings.Contains(list[0].URL, "s3cr3t") {
		t.Errorf("listed callback shows credentials: %q", list[0].URL)
	}
	if target, err := r.NotifyTarget(ctx, cb.ID); err != nil || target != raw {
		t.Errorf("NotifyTarget = %q, %v; want the URL as registered", target, err)
	}

	if err := r.DeleteNotifyCallback(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NotifyTarget(ctx, cb.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("NotifyTarget after delete: %v, want NotFound", err)
	}
	if err := r.DeleteNotifyCallback(ctx, u); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("second delete: %v, want NotFound", err)
	}
}

// Bad callback URLs: the error names the field and never shows the
// credentials.
func TestParseCallbackURLRefuses(t *testing.T) {
	for _, tc := range []struct{ name, url, want string }{
		{"empty", "", "callback: required"},
		{"relative", "/notify", `"/notify": want an http or https URL`},
		{"other scheme", "ftp://user:hunter2@host/x", `"ftp://redacted@host/x": want an http or https URL`},
		{"no host", "http://?token=hunter2", "no host"},
		{"unparsable", "http://host:port:hunter2/", "callback: not a URL"},
		{"too long", "http://host/" + strings.Repeat("a", 2048), "longer than 2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.ParseCallbackURL("callback", tc.url)
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "callback: ") {
				t.Fatalf("error %v, want InvalidArgument naming callback with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the credentials: %v", err)
			}
		})
	}
}

// A notice is stored exactly when its instance's record is: in one
// transaction, which fails whole.
func TestPutTaskGroupStoresNoticesWithIt(t *testing.T) {
	r, _ := newRegistry(t)
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	notice := registry.Notice{ID: registry.NoticeID(at, "ns-a_game_0_1", registry.NoticeExit), Type: registry.NoticeExit,
		Namespace: "ns-a", App: "game", TaskGroupID: "ns-a_game_0_1", Time: at, Message: "task ns-a_game_0_1_0 TASK_FAILED"}
	tg := &registry.TaskGroup{ID: "ns-a_game_0_1", Namespace: "ns-a", App: "game", State: "TASK_FAILED", Phase: "Pending"}
	if err := r.PutTaskGroup(ctx, tg, notice); err != nil {
		t.Fatal(err)
	}
	stored, err := r.ListNotifications(ctx)
	if err != nil || len(stored) != 1 || stored[0].Notice != notice || stored[0].Addressed || stored[0].State() != registry.NotificationPending {
		t.Fatalf("ListNotifications = %+v, %v; want the notice, pending", stored, err)
	}

	// The same notice again (a bug would be needed): nothing is written,
	// not even the instance.
	tg.State = "TASK_RUNNING"
	if err := r.PutTaskGroup(ctx, tg, notice); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("PutTaskGroup with a stored notice: %v, want AlreadyExists", err)
	}
	groups, err := r.TaskGroups(ctx, "ns-a", "game")
	if err != nil || len(groups) != 1 || groups[0].State != "TASK_FAILED" {
		t.Fatalf("task group after the failed transaction: %+v, %v", groups, err)
	}
}

// Notice IDs sort by time, whatever the launch.
func TestNoticeIDsSortByTime(t *testing.T) {
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.FixedZone("CST", 8*3600))
	first := registry.NoticeID(at, "z_app_9_9", registry.NoticeMissing)
	second := registry.NoticeID(at.Add(time.Nanosecond), "a_app_0_1", registry.NoticeExit)
	third := registry.NoticeID(at.Add(time.Second), "a_app_0_1", registry.NoticeExit)
	if !(first < second && second < third) || !strings.HasPrefix(first, "20261122T000000.000000000Z-") {
		t.Errorf("IDs %q %q %q do not sort by UTC time", first, second, third)
	}
}

// ModifyNotification applies its change again on a concurrent write:
// neither write is lost.
func TestModifyNotificationRetriesOnConflict(t *testing.T) {
	r, _ := newRegistry(t)
	at := time.Now()
	n := registry.Notice{ID: registry.NoticeID(at, "ns-a_game_0_1", registry.NoticeExit), Type: registry.NoticeExit, TaskGroupID: "ns-a_game_0_1", Time: at}
	if err := r.PutTaskGroup(ctx, &registry.TaskGroup{ID: "ns-a_game_0_1", Namespace: "ns-a", App: "game"}, n); err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := r.ModifyNotification(ctx, n.ID, func(n *registry.Notification) bool {
		calls++
		if calls == 1 {
			// Another notifier writes between this read and its write.
			other, err := r.GetNotification(ctx, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			other.Deliveries = append(other.Deliveries, registry.Delivery{Callback: "other", State: registry.DeliveryPending})
			if err := r.UpdateNotification(ctx, other); err != nil {
				t.Fatal(err)
			}
		}
		n.Addressed = true
		return true
	})
	if err != nil || calls != 2 || !got.Addressed || len(got.Deliveries) != 1 {
		t.Fatalf("ModifyNotification = %+v, %v after %d calls; want both writes kept", got, err, calls)
	}
}
