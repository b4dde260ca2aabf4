package autoscaler

import (
	"context"
	"errors"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// PlanAutoscaler says what the controller would decide for a now: its
// providers read once, the fleet and the stored record (if any) as
// they are, nothing written. It implements api.AutoscalePlanner.
func (c *Controller) PlanAutoscaler(ctx context.Context, a *manifest.Autoscaler) (*manifest.AutoscalerStatus, error) {
	spec, err := autoscale.SpecOf(a)
	if err != nil {
		return nil, errors.Join(errdefs.ErrInvalidArgument, err)
	}
	e := &entry{ref: Ref{a.Metadata.Namespace, a.Metadata.Name}, manifest: a, spec: spec}
	status, err := c.cfg.Registry.GetAutoscalerStatus(ctx, e.ref.Namespace, e.ref.Name)
	switch {
	case err == nil:
		e.status = status
	case !errors.Is(err, errdefs.ErrNotFound):
		return nil, err
	}
	decisions, _, err := c.decide(ctx, []*entry{e}, c.cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	return &decisions[0].Record, nil
}
