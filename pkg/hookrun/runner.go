package hookrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// Config configures a Runner.
type Config struct {
	Registry *registry.Registry
	// Store is where the runs are watched (hookruns/).
	Store *store.Store
	// Clock schedules measurements and stamps them; default the real one.
	// A call's timeout is real time: the network knows no other.
	Clock clockwork.Clock
	// Logger; default slog.Default(). It never sees header values.
	Logger *slog.Logger
	// Egress holds each run's calls to its namespace's egress policy;
	// default egress.DefaultSet() (loopback and link-local refused,
	// nothing allowed).
	Egress *egress.Set
}

// Runner drives the hook runs; see the package doc.
type Runner struct {
	cfg Config
	log *slog.Logger
}

// New returns a Runner; Registry and Store are required.
func New(cfg Config) (*Runner, error) {
	if cfg.Registry == nil || cfg.Store == nil {
		return nil, fmt.Errorf("hookrun: Registry and Store are required: %w", errdefs.ErrInvalidArgument)
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Egress == nil {
		cfg.Egress = egress.DefaultSet()
	}
	return &Runner{cfg: cfg, log: cfg.Logger}, nil
}

// runsPrefix is where the runs are stored.
const runsPrefix = string(store.KindHookRun) + "/"

// retryDelay is how long a run waits after a failed read or write of its
// record before it tries again.
const retryDelay = time.Second

// Run drives the runs until ctx ends: it lists them, watches for new,
// changed and deleted ones, and keeps one worker for each run that has
// not ended. It returns nil when ctx ends, or the error that ended the
// list or the watch (the store holds the truth: a new Run resumes), once
// every worker has stopped.
func (r *Runner) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	workers := map[string]*worker{} // by key
	exited := make(chan *worker)
	start := func(key string) {
		workerCtx, cancelWorker := context.WithCancel(ctx)
		w := newWorker(r, key, cancelWorker)
		workers[key] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancelWorker()
			w.run(workerCtx)
			select {
			case exited <- w:
			case <-ctx.Done():
			}
		}()
	}
	// changed tells the run at e.Key that its record changed, starting a
	// worker for a run that has not ended when it has none, stopping the
	// worker of a deleted run (one made afresh under its name gets a new
	// worker).
	changed := func(e store.Entry, deleted bool) {
		w := workers[e.Key]
		switch {
		case w != nil && deleted:
			w.cancel()
			delete(workers, e.Key)
		case w != nil:
			w.changed(e.Revision)
		case !deleted && r.running(e):
			start(e.Key)
		}
	}

	entries, rev, err := r.cfg.Store.ListWithRevision(ctx, runsPrefix)
	if err != nil {
		return r.ended(ctx, fmt.Errorf("hook runs: %w", err))
	}
	for _, e := range entries {
		changed(e, false)
	}
	events, err := r.cfg.Store.Watch(ctx, runsPrefix, rev+1)
	if err != nil {
		return r.ended(ctx, fmt.Errorf("hook runs: %w", err))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case w := <-exited:
			if workers[w.key] != w {
				break // stopped for its deletion
			}
			delete(workers, w.key)
			// A change it was told of after its last read: look again.
			if w.outdated() {
				start(w.key)
			}
		case ev, ok := <-events:
			switch {
			case !ok:
				return r.ended(ctx, fmt.Errorf("hook runs: watch closed: %w", errdefs.ErrUnavailable))
			case ev.Err != nil:
				return r.ended(ctx, fmt.Errorf("hook runs: %w", ev.Err))
			default:
				changed(ev.Entry, ev.Type == store.EventDelete)
			}
		}
	}
}

// ended returns err, or nil when ctx ended: stopping is not failing.
func (r *Runner) ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// running reports whether a stored run has not ended: it needs a
// worker. The worker reads it again through the registry.
func (r *Runner) running(e store.Entry) bool {
	var run registry.HookRun
	if err := json.Unmarshal(e.Value, &run); err != nil {
		r.log.Error("hook run record", "key", e.Key, "err", err)
		return false
	}
	return !run.Status.Phase.Completed()
}
