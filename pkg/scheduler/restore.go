package scheduler

import (
	"context"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// restore reads every kind of stored record and steps it into the core:
// one Restore, then the inputs of what cannot be had now (secrets whose
// values cannot be read, namespaces without their identity; both are
// retried) and of the engine's configuration set at run time. It returns
// the engine's mode.
//
// It logs how long reading and stepping took: a new leader schedules
// nothing before, and at 100,000 task groups both take seconds.
func (d *Driver) restore(ctx context.Context) (registry.EngineMode, error) {
	start := d.cfg.Clock.Now()
	in, after, err := d.readStored(ctx)
	if err != nil {
		return "", err
	}
	read := d.cfg.Clock.Since(start)
	if err := d.step(ctx, in); err != nil {
		return "", err
	}
	for _, in := range after {
		if err := d.step(ctx, in); err != nil {
			return "", err
		}
	}
	d.log.Info("restored", "applications", len(in.Apps), "task_groups", len(in.Groups),
		"read", read.Round(time.Millisecond), "took", d.cfg.Clock.Since(start).Round(time.Millisecond))
	return in.Engine.Mode, nil
}

// readStored reads the Restore, and the inputs to step after it.
func (d *Driver) readStored(ctx context.Context) (Restore, []Input, error) {
	in, err := d.readRecords(ctx)
	if err != nil {
		return in, nil, err
	}
	var after []Input
	if in.Objects, after, err = d.readObjects(ctx); err != nil {
		return in, nil, err
	}
	if in.AgentSettings, err = d.cfg.Registry.ListAgentSettings(ctx); err != nil {
		return in, nil, err
	}
	if err := d.learnStoredAgents(ctx); err != nil {
		return in, nil, err
	}
	engineConfig, err := d.readEngine(ctx, &in)
	if err != nil {
		return in, nil, err
	}
	after = append(after, engineConfig...)
	if d.cfg.Identities != nil {
		var failed []Input
		in.Identities, failed = d.restoreIdentities(ctx, in.Apps)
		after = append(after, failed...)
	}
	return in, after, nil
}

// readRecords reads the scheduler's own records: the framework ID, the
// applications, their instances and rollouts, the sweeps and hook runs.
func (d *Driver) readRecords(ctx context.Context) (Restore, error) {
	r := d.cfg.Registry
	var in Restore
	var err error
	if in.FrameworkID, err = r.FrameworkID(ctx); err != nil {
		return in, err
	}
	if in.Apps, err = r.ListApps(ctx, ""); err != nil {
		return in, err
	}
	storedGroups := r.AllTaskGroups
	if d.cfg.StoredTaskGroups != nil {
		storedGroups = d.cfg.StoredTaskGroups
	}
	if in.Groups, err = storedGroups(ctx); err != nil {
		return in, err
	}
	if in.Sweeps, err = r.ListSweeps(ctx); err != nil {
		return in, err
	}
	if in.Rollouts, err = r.ListRollouts(ctx); err != nil {
		return in, err
	}
	if in.HookRuns, err = r.ListHookRuns(ctx, ""); err != nil {
		return in, err
	}
	in.Allocations, err = r.Allocations(ctx, "", "")
	return in, err
}

// readObjects reads the referenced objects (configmaps, secrets, depends
// objects) and returns them, with an input for each secret whose values
// cannot be read now. An object it cannot read is logged and skipped.
func (d *Driver) readObjects(ctx context.Context) ([]manifest.Object, []Input, error) {
	var objects []manifest.Object
	var unreadable []Input
	for _, kind := range referencedKinds {
		recs, err := d.cfg.Registry.ListObjects(ctx, kind.manifest, "")
		if err != nil {
			return nil, nil, err
		}
		if kind.manifest == manifest.KindSecret {
			read, failed := d.readSecrets(ctx, recs)
			objects, unreadable = append(objects, read...), append(unreadable, failed...)
			continue
		}
		for _, rec := range recs {
			obj, err := rec.Manifest()
			if err != nil {
				d.log.Error("stored object", "kind", kind.manifest, "namespace", rec.Namespace, "name", rec.Name, "err", err)
				continue
			}
			objects = append(objects, obj)
		}
	}
	return objects, unreadable, nil
}

// learnStoredAgents holds the restored instances' remote checks off the
// stored agents' endpoints: the checks start before the master lists
// its agents.
func (d *Driver) learnStoredAgents(ctx context.Context) error {
	agents, err := d.cfg.Registry.ListAgents(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		d.probes.learnAgent(a.ID, a.Endpoint)
	}
	return nil
}

// readEngine reads the engine's mode into in, and returns the input of
// its configuration set at run time, if any.
func (d *Driver) readEngine(ctx context.Context, in *Restore) ([]Input, error) {
	engine, err := d.cfg.Registry.GetEngine(ctx)
	if err != nil {
		return nil, err
	}
	in.Engine = *engine
	settings, err := d.cfg.Registry.GetEngineSettings(ctx)
	if err != nil || len(settings.Values) == 0 {
		return nil, err
	}
	config, err := d.engineConfigInput(settings)
	if err != nil {
		return nil, err
	}
	return []Input{config}, nil
}

// restoreIdentities asks for the identities of the applications'
// namespaces (namespaceIdentities).
func (d *Driver) restoreIdentities(ctx context.Context, apps []*registry.App) (map[string]*proto.Identity, []Input) {
	namespaces := make([]string, len(apps))
	for i, a := range apps {
		namespaces[i] = a.Namespace
	}
	return d.namespaceIdentities(ctx, namespaces)
}
