package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The key layout documented in doc.go.
func TestKeyLayout(t *testing.T) {
	cases := []struct {
		name     string
		kind     store.Kind
		segments []string
		want     string
	}{
		{"application", store.KindApplication, []string{"default", "web"}, "apps/default/web"},
		{"task group with a Mesos-style id", store.KindTaskGroup, []string{"default", "web", "1536045411930155000.0.0.web.default.10001"}, "taskgroups/default/web/1536045411930155000.0.0.web.default.10001"},
		{"task", store.KindTask, []string{"default", "web", "tg-0", "task-0"}, "tasks/default/web/tg-0/task-0"},
		{"rollout", store.KindRollout, []string{"ns", "game"}, "rollouts/ns/game"},
		{"configmap", store.KindConfigMap, []string{"ns", "cfg"}, "configmaps/ns/cfg"},
		{"secret", store.KindSecret, []string{"ns", "db"}, "secrets/ns/db"},
		{"agent with a Mesos agent id", store.KindAgent, []string{"b7c1a6d3-5f2e-4c1a-9d7b-0e8f1a2b3c4d-S0"}, "agents/b7c1a6d3-5f2e-4c1a-9d7b-0e8f1a2b3c4d-S0"},
		{"sweep owed an agent", store.KindSweep, []string{"b7c1a6d3-5f2e-4c1a-9d7b-0e8f1a2b3c4d-S0"}, "sweeps/b7c1a6d3-5f2e-4c1a-9d7b-0e8f1a2b3c4d-S0"},
		{"notify callback", store.KindNotifyCallback, []string{"3f2a9c1d0b8e7a65"}, "notifycallbacks/3f2a9c1d0b8e7a65"},
		{"notify callback URL", store.KindNotifyTarget, []string{"3f2a9c1d0b8e7a65"}, "notifytargets/3f2a9c1d0b8e7a65"},
		{"notification", store.KindNotification, []string{"20261122T080000.000000000Z-ns_app_0_1-exit"}, "notifications/20261122T080000.000000000Z-ns_app_0_1-exit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := store.Key(c.kind, c.segments...)
			if err != nil || got != c.want {
				t.Fatalf("Key = %q, %v; want %q", got, err, c.want)
			}
			prefix, err := store.Prefix(c.kind, c.segments[:len(c.segments)-1]...)
			if err != nil || !strings.HasPrefix(got, prefix) || !strings.HasSuffix(prefix, "/") {
				t.Fatalf("Prefix = %q, %v; want a \"/\"-terminated prefix of %q", prefix, err, got)
			}
		})
	}
}

func TestKeyRejects(t *testing.T) {
	cases := []struct {
		name     string
		kind     store.Kind
		segments []string
	}{
		{"unknown kind", store.Kind("pods"), []string{"a"}},
		{"too few segments", store.KindApplication, []string{"default"}},
		{"too many segments", store.KindAgent, []string{"a", "b"}},
		{"empty segment", store.KindApplication, []string{"default", ""}},
		{"slash in segment", store.KindApplication, []string{"default", "a/b"}},
		{"dot dot", store.KindApplication, []string{"..", "web"}},
		{"space", store.KindApplication, []string{"default", "my app"}},
		{"too long", store.KindApplication, []string{"default", strings.Repeat("a", 254)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if key, err := store.Key(c.kind, c.segments...); !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("Key = %q, %v; want %v", key, err, errdefs.ErrInvalidArgument)
			}
		})
	}
	if _, err := store.Prefix(store.KindApplication, "default", "web"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("Prefix with a full key's segments = %v, want %v", err, errdefs.ErrInvalidArgument)
	}
}

// Version history keys sort numerically in List's lexical order.
func TestAppVersionKeysSortNumerically(t *testing.T) {
	var previous string
	for _, seq := range []uint64{0, 1, 2, 9, 10, 99, 100, 1 << 40, ^uint64(0)} {
		key, err := store.AppVersionKey("default", "web", seq)
		if err != nil {
			t.Fatal(err)
		}
		if key <= previous {
			t.Fatalf("key %q of version %d does not sort after %q", key, seq, previous)
		}
		previous = key
		if got, err := store.AppVersionSeq(key); err != nil || got != seq {
			t.Fatalf("AppVersionSeq(%q) = %d, %v; want %d", key, got, err, seq)
		}
	}
	for _, key := range []string{"apps/default/web", "appversions/default/web/x", "appversions/default/web"} {
		if _, err := store.AppVersionSeq(key); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("AppVersionSeq(%q) = %v, want %v", key, err, errdefs.ErrInvalidArgument)
		}
	}
}
