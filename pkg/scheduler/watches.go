package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// The store's watches reach the loop as one stream of changes
// (watchRecords), each turned into the core's input by the adapter of
// its kind of record. The adapters run on the loop's goroutine: some
// keep the loop's own state (the secrets being read, the namespaces'
// identities, the subscription the engine's mode starts and stops).

// recordWatch is a kind of stored record the loop watches, with its
// adapter: input turns a change of one into the core's input (nil when
// the core has nothing to do with it; a record it cannot read is logged
// and skipped), and fails only when the loop must stop.
type recordWatch struct {
	what   string // the kind, as errors name it
	prefix string
	input  func(ctx context.Context, we store.Event) (Input, error)
}

// recordChange is one event of a record watch, or that it ended.
type recordChange struct {
	watch *recordWatch
	event store.Event
	ended bool
}

// recordWatches are the kinds of stored records the core reads, and
// their adapters.
func (d *Driver) recordWatches() []*recordWatch {
	watches := []*recordWatch{
		{what: "application", prefix: "apps/", input: d.appChange},
		{what: "hook run", prefix: string(store.KindHookRun) + "/", input: d.hookRunChange},
		{what: "agent settings", prefix: string(store.KindAgentSettings) + "/", input: d.settingsChange},
		{what: "engine", prefix: store.EnginePrefix, input: d.engineChange},
		{what: "allocation", prefix: string(store.KindAllocation) + "/", input: d.allocationChange},
	}
	for _, kind := range referencedKinds {
		watches = append(watches, &recordWatch{what: string(kind.store), prefix: string(kind.store) + "/", input: d.objectChange(kind.manifest)})
	}
	return watches
}

// watchRecords watches every kind of record the core reads and fans the
// watches' events into the one channel it returns, each watch's in the
// order it brought them, until ctx ends. The loop watches before it
// reads the store (restore), so no change slips between the two; a
// change seen twice is harmless.
func (d *Driver) watchRecords(ctx context.Context) (<-chan recordChange, error) {
	changes := make(chan recordChange)
	for _, w := range d.recordWatches() {
		events, err := d.cfg.Store.Watch(ctx, w.prefix, 0)
		if err != nil {
			return nil, err
		}
		go forwardChanges(ctx, w, events, changes)
	}
	return changes, nil
}

// forwardChanges hands out w's events, then that it ended.
func forwardChanges(ctx context.Context, w *recordWatch, events <-chan store.Event, out chan<- recordChange) {
	for {
		var change recordChange
		select {
		case we, ok := <-events:
			change = recordChange{watch: w, event: we, ended: !ok}
		case <-ctx.Done():
			return
		}
		select {
		case out <- change:
		case <-ctx.Done():
			return
		}
		if change.ended {
			return
		}
	}
}

// recordInput is the core's input of a change a watch brought, by its
// kind's adapter; a watch that ended stops the loop.
func (d *Driver) recordInput(ctx context.Context, change recordChange) (Input, error) {
	w, we := change.watch, change.event
	switch {
	case (change.ended || we.Err != nil) && ctx.Err() != nil:
		return nil, nil // stopping
	case change.ended:
		return nil, fmt.Errorf("%s watch closed", w.what)
	case we.Err != nil:
		return nil, fmt.Errorf("%s watch: %w", w.what, we.Err)
	}
	return w.input(ctx, we)
}

// appChange: an application was written or deleted. The core has the
// identity of a written one's namespace before the application.
func (d *Driver) appChange(ctx context.Context, we store.Event) (Input, error) {
	in, err := appInput(we)
	if err != nil {
		d.log.Error("application record", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	if changed, ok := in.(AppChanged); ok {
		return in, d.ensureIdentity(ctx, changed.App.Namespace)
	}
	return in, nil
}

func appInput(we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		parts := strings.Split(we.Entry.Key, "/")
		if len(parts) != 3 {
			return nil, fmt.Errorf("unexpected key %q", we.Entry.Key)
		}
		return AppRemoved{Namespace: parts[1], Name: parts[2]}, nil
	}
	var app registry.App
	if err := json.Unmarshal(we.Entry.Value, &app); err != nil {
		return nil, err
	}
	app.Revision = we.Entry.Revision
	return AppChanged{App: &app}, nil
}

// hookRunChange: a hook run was written; nil for a deletion (the core
// forgets runs itself).
func (d *Driver) hookRunChange(_ context.Context, we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		return nil, nil
	}
	var run registry.HookRun
	if err := json.Unmarshal(we.Entry.Value, &run); err != nil {
		d.log.Error("stored hook run", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	run.Revision = we.Entry.Revision
	return HookRunChanged{Run: &run}, nil
}

// settingsChange: an agent's settings were written or deleted.
func (d *Driver) settingsChange(_ context.Context, we store.Event) (Input, error) {
	in, err := settingsInput(we)
	if err != nil {
		d.log.Error("stored record", "what", "agent settings", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	return in, nil
}

func settingsInput(we store.Event) (Input, error) {
	if we.Type == store.EventDelete {
		parts := strings.Split(we.Entry.Key, "/")
		return AgentSettingsChanged{Settings: &registry.AgentSettings{Hostname: parts[len(parts)-1]}}, nil
	}
	var s registry.AgentSettings
	if err := json.Unmarshal(we.Entry.Value, &s); err != nil {
		return nil, err
	}
	return AgentSettingsChanged{Settings: &s}, nil
}

// engineChange: the engine's mode or configuration changed. Stopped, the
// framework leaves Mesos (its tasks keep running for the failover
// timeout); started, it subscribes again. A change of the engine's
// configuration is the core's only.
func (d *Driver) engineChange(ctx context.Context, we store.Event) (Input, error) {
	in, err := d.engineInput(we)
	if err != nil {
		d.log.Error("stored record", "what", "engine", "key", we.Entry.Key, "err", err)
		return nil, nil
	}
	mode, isMode := in.(EngineChanged)
	switch {
	case isMode && mode.Engine.Mode == registry.EngineStopped && d.sub.running():
		d.sub.stop()
		d.caller = nil
		return in, d.step(ctx, Disconnected{})
	case isMode && mode.Engine.Mode != registry.EngineStopped && !d.sub.running():
		d.sub.start(ctx, d)
	}
	return in, nil
}

// engineInput is the input of a change under store.EnginePrefix: of
// the engine's mode, or of its configuration.
func (d *Driver) engineInput(we store.Event) (Input, error) {
	if we.Entry.Key == store.EngineConfigKey {
		var s registry.EngineSettings
		if we.Type != store.EventDelete {
			if err := json.Unmarshal(we.Entry.Value, &s); err != nil {
				return nil, err
			}
		}
		return d.engineConfigInput(&s)
	}
	if we.Type == store.EventDelete {
		return EngineChanged{Engine: registry.Engine{Mode: registry.EngineRunning}}, nil
	}
	var e registry.Engine
	if err := json.Unmarshal(we.Entry.Value, &e); err != nil {
		return nil, err
	}
	return EngineChanged{Engine: e}, nil
}

// engineConfigInput is the engine's configuration with settings over
// the driver's defaults, for the core; the driver takes its own part,
// the agent sync interval, which syncAgents waits from its next wait.
func (d *Driver) engineConfigInput(settings *registry.EngineSettings) (Input, error) {
	cfg, err := settings.Over(d.engineDefaults)
	if err != nil {
		return nil, err
	}
	d.agentSyncInterval.Store(int64(cfg.AgentSyncInterval))
	return EngineConfigChanged{Config: cfg}, nil
}

// referencedKind is a kind of object the core reads, with its key kind.
type referencedKind struct {
	manifest manifest.Kind
	store    store.Kind
}

// referencedKinds are watched for the core: configmaps, secrets (which
// launches inject), then depends objects (which dependency pods run).
var referencedKinds = []referencedKind{{manifest.KindConfigMap, store.KindConfigMap}, {manifest.KindSecret, store.KindSecret},
	{manifest.KindDepends, store.KindDepends}}

// objectChange is the adapter of a referenced kind of object: a written
// object, or that it was deleted. A secret's values may have to be read
// first (secretChanged; nil input until then).
func (d *Driver) objectChange(kind manifest.Kind) func(context.Context, store.Event) (Input, error) {
	return func(ctx context.Context, we store.Event) (Input, error) {
		if we.Type == store.EventDelete {
			parts := strings.Split(we.Entry.Key, "/")
			if len(parts) != 3 {
				d.log.Error("unexpected key", "key", we.Entry.Key)
				return nil, nil
			}
			if kind == manifest.KindSecret {
				d.forgetSecret(parts[1], parts[2])
			}
			return ObjectRemoved{Kind: kind, Namespace: parts[1], Name: parts[2]}, nil
		}
		var rec registry.Object
		if err := json.Unmarshal(we.Entry.Value, &rec); err != nil {
			d.log.Error("stored object", "key", we.Entry.Key, "err", err)
			return nil, nil
		}
		if kind == manifest.KindSecret {
			rec.Revision = we.Entry.Revision
			return d.secretChanged(ctx, &rec), nil
		}
		obj, err := rec.Manifest()
		if err != nil {
			d.log.Error("stored object", "key", we.Entry.Key, "err", err)
			return nil, nil
		}
		return ObjectChanged{Object: obj}, nil
	}
}
