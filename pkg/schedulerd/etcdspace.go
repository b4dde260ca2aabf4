package schedulerd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Thresholds of the etcd space watch.
const (
	spaceCheckInterval = 30 * time.Second
	// spaceWarnAt is the share of its quota at which the database is said
	// to be near it; spaceClearAt the share below which it is no longer.
	spaceWarnAt, spaceClearAt = 0.8, 0.7
)

// spaceWatch follows etcd's database against its quota, as gauges and in
// the log: near the quota it warns; once etcd raised its NOSPACE alarm and
// refuses every write (launches, status updates, API writes), it says so
// at each check until the alarm is disarmed, and an embedded etcd, this
// process's own, is compacted and defragmented to make room.
type spaceWatch struct {
	space func(context.Context) (store.Space, error)
	// reclaim is the embedded etcd's Reclaim; nil for an external one,
	// whose operator decides.
	reclaim func(context.Context) (store.Space, error)
	log     *slog.Logger

	size, inUse, quota, noSpace prometheus.Gauge
	near                        bool // warned that the database is near its quota
}

func newSpaceWatch(st *store.Store, embedded *store.Embedded, reg prometheus.Registerer, log *slog.Logger) *spaceWatch {
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		reg.MustRegister(g)
		return g
	}
	w := &spaceWatch{
		space: st.Space, log: log,
		size:    gauge("bcs_scheduler_etcd_db_size_bytes", "etcd's database file on its fullest member, what its quota limits"),
		inUse:   gauge("bcs_scheduler_etcd_db_size_in_use_bytes", "the part of etcd's database file holding revisions; the rest is free pages"),
		quota:   gauge("bcs_scheduler_etcd_quota_bytes", "etcd's quota (--quota-backend-bytes)"),
		noSpace: gauge("bcs_scheduler_etcd_nospace_alarm", "1 while etcd's NOSPACE alarm is raised: it refuses every write"),
	}
	if embedded != nil {
		w.reclaim = embedded.Reclaim
	}
	return w
}

// run checks every interval until ctx ends.
func (w *spaceWatch) run(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		w.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (w *spaceWatch) check(ctx context.Context) {
	space, err := w.space(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("etcd's database size: not known", "err", err)
		}
		return
	}
	w.show(space)
	if space.NoSpace {
		w.full(ctx, space)
		return
	}
	switch used := space.Used(); {
	case used >= spaceWarnAt && !w.near:
		w.near = true
		w.log.Warn(fmt.Sprintf("etcd's database is at %.0f %% of its quota: at the quota etcd refuses every write; "+
			"raise the quota (--etcd-quota-backend-bytes, or the external etcd's --quota-backend-bytes) or defragment it", 100*used),
			"endpoint", space.Endpoint, "size", space.Size, "in_use", space.InUse, "quota", space.Quota)
	case used < spaceClearAt && w.near:
		w.near = false
		w.log.Info(fmt.Sprintf("etcd's database is back to %.0f %% of its quota", 100*used), "size", space.Size, "quota", space.Quota)
	}
}

func (w *spaceWatch) show(space store.Space) {
	w.size.Set(float64(space.Size))
	w.inUse.Set(float64(space.InUse))
	w.quota.Set(float64(space.Quota))
	alarm := 0.0
	if space.NoSpace {
		alarm = 1
	}
	w.noSpace.Set(alarm)
}

// full reports an etcd that raised its NOSPACE alarm and, when it is
// the embedded one, makes room.
func (w *spaceWatch) full(ctx context.Context, space store.Space) {
	attrs := []any{"endpoint", space.Endpoint, "size", space.Size, "in_use", space.InUse, "quota", space.Quota}
	if w.reclaim == nil {
		w.log.Error("etcd's database reached its quota and etcd refuses every write (launches, status updates, API writes): "+
			"compact it (etcdctl compact), defragment each member (etcdctl defrag) and disarm the alarm (etcdctl alarm disarm), "+
			"or raise its --quota-backend-bytes (docs/operations.md)", attrs...)
		return
	}
	w.log.Error("etcd's database reached its quota and etcd refuses every write (launches, status updates, API writes): "+
		"compacting its history and defragmenting it (etcd pauses meanwhile)", attrs...)
	after, err := w.reclaim(ctx)
	if err != nil {
		w.log.Error("making room in etcd's database failed; writes stay refused", "err", err)
		return
	}
	w.show(after)
	if after.NoSpace {
		w.log.Error("etcd's live data alone fills its quota; writes stay refused: restart with a larger --etcd-quota-backend-bytes",
			"size", after.Size, "in_use", after.InUse, "quota", after.Quota)
		return
	}
	w.log.Warn("etcd takes writes again: compacted and defragmented below its quota", "size", after.Size, "quota", after.Quota)
}
