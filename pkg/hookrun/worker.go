package hookrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// worker drives one run until it ends, is deleted, or its ctx ends.
type worker struct {
	r                    *Runner
	key, namespace, name string
	log                  *slog.Logger
	// cancel stops the worker (its run was deleted).
	cancel context.CancelFunc
	// seen is the latest revision of the record the watch reported, and
	// signal says it moved; the worker reads the record again only when
	// seen is past known, so its own writes do not wake it.
	seen   atomic.Int64
	signal chan struct{}
	// known is the revision the worker last read or wrote; the Runner
	// reads it once the worker has exited.
	known int64

	results chan taken
	calls   map[int]context.CancelFunc // metrics measuring now
	callers sync.WaitGroup
}

func newWorker(r *Runner, key string, cancel context.CancelFunc) *worker {
	_, namespaceName, _ := strings.Cut(key, "/")
	namespace, name, _ := strings.Cut(namespaceName, "/")
	return &worker{r: r, key: key, namespace: namespace, name: name, cancel: cancel,
		log: r.log.With("hookrun", namespaceName), signal: make(chan struct{}, 1),
		results: make(chan taken), calls: map[int]context.CancelFunc{}}
}

// changed tells the worker the record is at revision rev.
func (w *worker) changed(rev int64) {
	if rev > w.seen.Load() {
		w.seen.Store(rev) // only the Runner's goroutine stores
	}
	select {
	case w.signal <- struct{}{}:
	default: // one pending signal covers any number of changes
	}
}

// outdated reports whether the record changed since the worker last saw it.
func (w *worker) outdated() bool { return w.seen.Load() > w.known }

// taken is a measurement of metric (its index and name), begun when the
// run (started at startedAt) had taken `before` measurements of it.
type taken struct {
	metric, before int
	name           string
	startedAt      time.Time
	measurement    hook.Measurement
}

func (w *worker) run(ctx context.Context) {
	defer func() {
		w.stopCalls()
		w.callers.Wait()
	}()
	run := w.read(ctx)
	for run != nil && !run.Status.Phase.Completed() {
		switch {
		case run.Spec.Terminate:
			w.stopCalls()
			run = w.write(ctx, func(stored *registry.HookRun) bool { return stored.Status.Terminate(w.r.cfg.Clock.Now().UTC()) })
		case run.Status.StartedAt.IsZero():
			run = w.start(ctx, run)
		case len(run.Status.MetricResults) != len(run.Spec.Metrics):
			// Only a writer other than the runner makes this: end the run
			// rather than guess which result is whose.
			run = w.write(ctx, func(stored *registry.HookRun) bool {
				stored.Status.Abort(fmt.Sprintf("the status has %d metric results for %d metrics: the record was changed outside the hook runner",
					len(stored.Status.MetricResults), len(stored.Spec.Metrics)), w.r.cfg.Clock.Now().UTC())
				return true
			})
		default:
			now := w.r.cfg.Clock.Now()
			due, next := run.Status.Next(run.Spec.Metrics, now)
			for _, i := range due {
				if w.calls[i] == nil {
					w.calls[i] = w.measure(ctx, run, i)
				}
			}
			var wait time.Duration
			if !next.IsZero() {
				wait = next.Sub(now)
			}
			run = w.await(ctx, run, wait)
		}
	}
}

// await waits for what comes first — a measurement due after wait (0:
// none is), one finished, a change of the record — and returns the run
// to go on with; nil when it was deleted or ctx ended.
func (w *worker) await(ctx context.Context, run *registry.HookRun, wait time.Duration) *registry.HookRun {
	var due <-chan time.Time
	if wait > 0 {
		timer := w.r.cfg.Clock.NewTimer(wait)
		defer timer.Stop()
		due = timer.Chan()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-due:
			return run
		case t := <-w.results:
			w.calls[t.metric]()
			delete(w.calls, t.metric)
			return w.record(ctx, t)
		case <-w.signal:
			if w.outdated() {
				return w.read(ctx)
			}
		}
	}
}

func (w *worker) stopCalls() {
	for _, cancel := range w.calls {
		cancel()
	}
	clear(w.calls)
}

// start begins the run: its template's metrics and arguments copied in
// when it has no metrics of its own, then hook.Start.
func (w *worker) start(ctx context.Context, run *registry.HookRun) *registry.HookRun {
	spec := run.Spec
	var cannot string // why the run cannot start
	if len(spec.Metrics) == 0 {
		var err error
		if spec.Metrics, spec.Args, cannot, err = w.resolve(ctx, spec); err != nil {
			w.log.Error("hook template", "template", spec.TemplateName, "err", err)
			return w.retry(ctx)
		}
	}
	w.log.Info("hook run starts", "template", spec.TemplateName, "metrics", len(spec.Metrics))
	return w.write(ctx, func(stored *registry.HookRun) bool {
		now := w.r.cfg.Clock.Now().UTC()
		switch {
		case !stored.Status.StartedAt.IsZero():
			return false // started already
		case cannot != "":
			stored.Status.Abort(cannot, now)
		default:
			if len(stored.Spec.Metrics) == 0 {
				stored.Spec.Metrics, stored.Spec.Args = spec.Metrics, spec.Args
			}
			stored.Status = hook.Start(stored.Spec, now)
		}
		return true
	})
}

// resolve returns the metrics and arguments of a run of spec's template:
// the template's metrics; its arguments, each with the run's value or
// else its default, then the run's other arguments (the scheduler gives
// every run the same set, whatever the template declares: they are
// kept, unused). A template that is missing, or declares an argument
// without a value that the run does not give, is the reason the run
// cannot start; err is a store failure (try again).
func (w *worker) resolve(ctx context.Context, spec hook.RunSpec) (metrics []manifest.HookMetric, args []manifest.HookArg, cannot string, err error) {
	if spec.TemplateName == "" {
		return nil, nil, "cannot run: neither spec.metrics nor spec.templateName", nil
	}
	obj, err := w.r.cfg.Registry.GetObject(ctx, manifest.KindHookTemplate, w.namespace, spec.TemplateName)
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, nil, fmt.Sprintf("cannot run: hook template %s/%s not found", w.namespace, spec.TemplateName), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	m, err := obj.Manifest()
	if err != nil {
		return nil, nil, fmt.Sprintf("cannot run: stored hook template %s/%s: %v", w.namespace, spec.TemplateName, err), nil
	}
	t, ok := m.(*manifest.HookTemplate)
	if !ok {
		return nil, nil, fmt.Sprintf("cannot run: stored hook template %s/%s is a %s", w.namespace, spec.TemplateName, m.Kind()), nil
	}
	declared := map[string]bool{}
	for _, a := range t.Spec.Args {
		declared[a.Name] = true
	}
	given := map[string]string{}
	var declaredGiven, others []manifest.HookArg
	for _, a := range spec.Args {
		given[a.Name] = a.Value
		if declared[a.Name] {
			declaredGiven = append(declaredGiven, a)
		} else {
			others = append(others, a)
		}
	}
	if problems := manifest.HookArgProblems(t, declaredGiven, "spec", nil); len(problems) > 0 {
		return nil, nil, "cannot run: " + problems.Error(), nil
	}
	for _, a := range t.Spec.Args {
		if v, ok := given[a.Name]; ok {
			a.Value = v
		}
		args = append(args, a)
	}
	return t.Spec.Metrics, append(args, others...), "", nil
}

// measure takes metric i's measurement in a goroutine of its own and
// sends it to results, unless the returned cancel came first.
func (w *worker) measure(ctx context.Context, run *registry.HookRun, i int) context.CancelFunc {
	ctx, cancel := context.WithCancel(ctx)
	metric, args := run.Spec.Metrics[i], run.Spec.Args
	t := taken{metric: i, before: run.Status.MetricResults[i].Taken(), name: metric.Name, startedAt: run.Status.StartedAt}
	w.callers.Add(1)
	go func() {
		defer w.callers.Done()
		t.measurement = w.r.measure(ctx, w.r.cfg.Egress.Policy(w.namespace), metric, args)
		select {
		case w.results <- t:
		case <-ctx.Done():
		}
	}()
	return cancel
}

// record writes a measurement into the stored run, unless the run ended,
// was terminated meanwhile (it ends Terminated instead), or is not the
// one it was taken for: the metric gained a measurement since this one
// began (another runner's), or the run was made afresh.
func (w *worker) record(ctx context.Context, t taken) *registry.HookRun {
	m := t.measurement
	w.log.Debug("measured", "metric", t.name, "phase", m.Phase, "value", m.Value, "message", m.Message)
	return w.write(ctx, func(stored *registry.HookRun) bool {
		switch {
		case stored.Status.Phase.Completed():
			return false
		case stored.Spec.Terminate:
			return stored.Status.Terminate(w.r.cfg.Clock.Now().UTC())
		case !stored.Status.StartedAt.Equal(t.startedAt) || len(stored.Status.MetricResults) != len(stored.Spec.Metrics) ||
			stored.Status.MetricResults[t.metric].Taken() != t.before:
			w.log.Warn("measurement dropped: the run changed since it began (measured meanwhile, or made afresh)", "metric", t.name)
			return false
		}
		stored.Status.Record(stored.Spec.Metrics, t.metric, m)
		return true
	})
}

// read returns the stored run; nil when it was deleted or ctx ended.
func (w *worker) read(ctx context.Context) *registry.HookRun {
	run, err := w.r.cfg.Registry.GetHookRun(ctx, w.namespace, w.name)
	return w.settle(ctx, run, err)
}

// write applies change to the stored run (ModifyHookRun: again on a
// concurrent write) and returns the run as stored; nil when it was
// deleted or ctx ended.
func (w *worker) write(ctx context.Context, change func(*registry.HookRun) bool) *registry.HookRun {
	var wrote bool
	run, err := w.r.cfg.Registry.ModifyHookRun(ctx, w.namespace, w.name, func(stored *registry.HookRun) (bool, error) {
		wrote = change(stored)
		return wrote, nil
	})
	if err == nil && wrote && run.Status.Phase.Completed() {
		w.log.Info("hook run ended", "phase", run.Status.Phase, "message", run.Status.Message)
	}
	return w.settle(ctx, run, err)
}

// settle returns the run a read or write returned; nil when the run was
// deleted or ctx ended. A store failure is logged and the run read again
// after retryDelay: a measurement that was not written is taken again.
func (w *worker) settle(ctx context.Context, run *registry.HookRun, err error) *registry.HookRun {
	switch {
	case err == nil:
		w.known = run.Revision
		return run
	case errors.Is(err, errdefs.ErrNotFound):
		w.log.Info("hook run deleted")
		return nil
	case ctx.Err() != nil:
		return nil
	}
	w.log.Error("hook run record", "err", err)
	return w.retry(ctx)
}

// retry reads the run again after retryDelay.
func (w *worker) retry(ctx context.Context) *registry.HookRun {
	select {
	case <-w.r.cfg.Clock.After(retryDelay):
		return w.read(ctx)
	case <-ctx.Done():
		return nil
	}
}
