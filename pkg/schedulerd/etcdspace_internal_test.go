package schedulerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// An etcd at its quota refuses every write with "database space
// exceeded" and raises its NOSPACE alarm. The space watch shows it as
// gauges, says it in the log at each check, and on the embedded etcd
// makes room — compacting its history, defragmenting — so that writes go
// through again; when the live data alone fills the quota it says the
// quota must grow. A real embedded etcd with a 2 MiB quota.
func TestSpaceWatchReportsAndReclaimsAFullEmbeddedEtcd(t *testing.T) {
	ctx := context.Background()
	const quota = 2 << 20
	etcd, err := store.StartEmbedded(ctx, t.TempDir(), store.WithQuota(quota))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	st, err := store.Open(ctx, store.Config{Endpoints: etcd.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var logged bytes.Buffer
	reg := prometheus.NewRegistry()
	watch := newSpaceWatch(st, etcd, reg, slog.New(slog.NewTextHandler(&logged, nil)))

	// One key rewritten: all but its last value are history, which is
	// what compaction frees.
	key := "taskgroups/default/web/tg-0"
	value := bytes.Repeat([]byte("x"), 64<<10)
	for n := 0; ; n++ {
		if _, err = st.Put(ctx, key, value); err != nil {
			break
		}
		if n > 4*quota/len(value) {
			t.Fatalf("etcd took %d writes of 64 KiB with a 2 MiB quota", n)
		}
	}
	if !errors.Is(err, store.ErrNoSpace) {
		t.Fatalf("write over the quota: %v, want store.ErrNoSpace", err)
	}
	watch.check(ctx)
	log := logged.String()
	for _, says := range []string{"level=ERROR", "reached its quota and etcd refuses every write", "compacting", "etcd takes writes again"} {
		if !strings.Contains(log, says) {
			t.Errorf("the log does not say %q:\n%s", says, log)
		}
	}
	if got := gaugeValue(t, watch.noSpace); got != 0 {
		t.Errorf("bcs_scheduler_etcd_nospace_alarm = %v after the room was made, want 0", got)
	}
	if got := gaugeValue(t, watch.quota); got != quota {
		t.Errorf("bcs_scheduler_etcd_quota_bytes = %v, want %d", got, quota)
	}
	if _, err := st.Put(ctx, key, []byte("1")); err != nil {
		t.Fatalf("a write once the watch made room: %v", err)
	}

	// Live data up to the quota: nothing to free. Where etcd stops
	// taking writes depends on how its file's pages fill, so a check may
	// still make room: the writes go on until one does not.
	log = ""
	for i, checks := 1, 0; !strings.Contains(log, "live data alone fills its quota"); checks++ {
		if checks == 10 {
			t.Fatalf("etcd still takes writes after %d checks of a full database:\n%s", checks, log)
		}
		for ; ; i++ {
			if _, err = st.Put(ctx, fmt.Sprintf("taskgroups/default/web/tg-%d", i), value); err != nil {
				break
			}
		}
		logged.Reset()
		watch.check(ctx)
		log = logged.String()
	}
	if !strings.Contains(log, "--etcd-quota-backend-bytes") {
		t.Errorf("the log does not say the quota must grow:\n%s", log)
	}
	if got := gaugeValue(t, watch.noSpace); got != 1 {
		t.Errorf("bcs_scheduler_etcd_nospace_alarm = %v with the live data at the quota, want 1", got)
	}
}

// Near the quota the watch warns once, and says when it is no longer.
func TestSpaceWatchWarnsNearTheQuota(t *testing.T) {
	var logged bytes.Buffer
	space := store.Space{Endpoint: "http://etcd:2379", Size: 85, InUse: 60, Quota: 100}
	watch := newSpaceWatch(nil, nil, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logged, nil)))
	watch.space = func(context.Context) (store.Space, error) { return space, nil }
	watch.check(context.Background())
	watch.check(context.Background())
	if n := strings.Count(logged.String(), "at 85 % of its quota"); n != 1 {
		t.Errorf("warned %d times at 85 %% of the quota, want once:\n%s", n, logged.String())
	}
	space.Size = 50
	watch.check(context.Background())
	if !strings.Contains(logged.String(), "back to 50 % of its quota") {
		t.Errorf("no word that the database is back below the quota's edge:\n%s", logged.String())
	}
	if got := gaugeValue(t, watch.size); got != 50 {
		t.Errorf("bcs_scheduler_etcd_db_size_bytes = %v, want 50", got)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
