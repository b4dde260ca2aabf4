package registry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/rollout"
)

// DependencyPod marks an application the scheduler runs as a dependency
// pod (seed 002's dependsController): a deployment of one instance of a
// depends object's template on one agent, for the instances of the
// applications that reference it there. The scheduler creates, updates
// and deletes it; operators change the depends object instead.
type DependencyPod struct {
	// DependsNamespace and DependsName name the depends object.
	DependsNamespace string `json:"dependsNamespace"`
	DependsName      string `json:"dependsName"`
	// Node is the hostname of the agent it runs on.
	Node   string                 `json:"node"`
	Policy manifest.DependsPolicy `json:"policy"`
	// ServedNamespace is, with policy namespace, the namespace whose
	// instances it serves (and its own).
	ServedNamespace string `json:"servedNamespace,omitempty"`
	// Users counts the live instances that reference it on Node.
	Users int `json:"users"`
	// IdleSince is when its last user left; zero while it has users.
	// It is removed a while after (the scheduler's depends GC delay).
	IdleSince time.Time `json:"idleSince,omitzero"`
}

// Depends returns "namespace/name" of the depends object.
func (p *DependencyPod) Depends() string { return p.DependsNamespace + "/" + p.DependsName }

// App names the application of the pod: in the served namespace (policy
// namespace) or the depends object's, named after the depends object and
// the node, readable, then a hash of all it stands for, so that no two
// pods share a name.
func (p *DependencyPod) App() (namespace, name string) {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", p.DependsNamespace, p.DependsName, p.Node, p.ServedNamespace)
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	base := []byte(strings.ToLower(p.DependsName + "-" + p.Node))
	for i, b := range base {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') {
			base[i] = '-'
		}
	}
	name = strings.TrimRight(string(base[:min(len(base), manifest.MaxNameLength-len(suffix))]), "-") + suffix
	return cmp.Or(p.ServedNamespace, p.DependsNamespace), name
}

// Equal reports whether p and q say the same (times compared as
// instants: a record read back from the store has lost its location).
func (p DependencyPod) Equal(q DependencyPod) bool {
	same := p.IdleSince.Equal(q.IdleSince)
	p.IdleSince, q.IdleSince = time.Time{}, time.Time{}
	return same && p == q
}

// notDependencyPod refuses an operator's change of a dependency pod.
func notDependencyPod(app *App) error {
	if p := app.DependencyPod; p != nil {
		return fmt.Errorf("%s/%s is a dependency pod of depends %s, which the scheduler manages; change the depends object instead: %w",
			app.Namespace, app.Name, p.Depends(), errdefs.ErrConflict)
	}
	return nil
}

// PutDependencyPod stores the dependency pod the scheduler wants: want's
// spec (a new version when it changed) and its DependencyPod state. A
// record of that name that is no dependency pod, or one being deleted,
// is left alone: errdefs.ErrConflict.
func (r *Registry) PutDependencyPod(ctx context.Context, want *App) error {
	if want.DependencyPod == nil {
		return fmt.Errorf("%s/%s: no dependency pod: %w", want.Namespace, want.Name, errdefs.ErrInvalidArgument)
	}
	for {
		_, err := r.GetApp(ctx, want.Namespace, want.Name)
		if errors.Is(err, errdefs.ErrNotFound) {
			err = r.createDependencyPod(ctx, want)
			if errors.Is(err, errdefs.ErrAlreadyExists) {
				continue // created meanwhile: update it
			}
			return err
		}
		if err != nil {
			return err
		}
		state := *want.DependencyPod
		_, err = r.modifyApp(ctx, want.Namespace, want.Name, 0, func(app *App) (bool, error) {
			if app.DependencyPod == nil {
				return false, fmt.Errorf("%s %s/%s exists and is no dependency pod: %w", app.Kind, app.Namespace, app.Name, errdefs.ErrConflict)
			}
			if app.State == AppDeleting {
				return false, fmt.Errorf("dependency pod %s/%s is being deleted: %w", app.Namespace, app.Name, errdefs.ErrConflict)
			}
			app.DependencyPod = &state
			if bytes.Equal(app.Spec, want.Spec) {
				return false, nil
			}
			app.Spec, app.Cause, app.RolledBackTo = want.Spec, rollout.CauseUpdate, 0
			return true, nil
		})
		if errors.Is(err, errdefs.ErrNotFound) {
			continue // deleted meanwhile: create it
		}
		return err
	}
}

func (r *Registry) createDependencyPod(ctx context.Context, want *App) error {
	now := r.now().UTC()
	state := *want.DependencyPod
	app := &App{Namespace: want.Namespace, Name: want.Name, Kind: manifest.KindDeployment, Version: 1, Instances: 1,
		Spec: want.Spec, State: AppDeploying, Message: "waiting for the scheduler", CreatedAt: now, UpdatedAt: now,
		Cause: rollout.CauseUpdate, DependencyPod: &state}
	ops, err := r.appWrite(app, 0)
	if err != nil {
		return err
	}
	if _, err := r.store.Apply(ctx, ops...); err != nil {
		return fmt.Errorf("dependency pod %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}

// DeleteDependencyPod asks for the deletion of a dependency pod (see
// DeleteApp); a record of that name that is no dependency pod is left
// alone (errdefs.ErrConflict).
func (r *Registry) DeleteDependencyPod(ctx context.Context, namespace, name string) error {
	_, err := r.deleteApp(ctx, namespace, name, true, func(app *App) error {
		if app.DependencyPod == nil {
			return fmt.Errorf("%s %s/%s is no dependency pod: %w", app.Kind, namespace, name, errdefs.ErrConflict)
		}
		return nil
	})
	return err
}
