package autoscaler

import (
	"context"
	"fmt"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/hookrun"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
)

// readAll reads the prometheus and web metrics of entries, one reading
// per such metric in spec order, at most MaxCalls calls at a time, each
// under its namespace's egress policy.
func (c *Controller) readAll(ctx context.Context, entries []*entry) [][]autoscale.Reading {
	out := make([][]autoscale.Reading, len(entries))
	slots := make(chan struct{}, c.cfg.MaxCalls)
	var wg sync.WaitGroup
	for i, e := range entries {
		policy := c.cfg.Egress.Policy(e.ref.Namespace)
		for _, m := range e.spec.Metrics {
			if m.Type != manifest.MetricPrometheus && m.Type != manifest.MetricWeb {
				continue
			}
			j := len(out[i])
			out[i] = append(out[i], autoscale.Reading{})
			provider := manifest.HookProvider{Prometheus: m.Prometheus, Web: m.Web}
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				out[i][j] = autoscale.ReadingOf(hookrun.Call(ctx, policy, provider))
			}()
		}
	}
	wg.Wait()
	return out
}

// orderValues reads e's scale-down order: each instance's value by ID,
// or why they could not be read. Without an order there are none.
func (c *Controller) orderValues(ctx context.Context, e *entry, fleet Fleet) (map[int]float64, string) {
	order := e.manifest.Spec.ScaleDownOrder
	switch {
	case order == nil:
		return nil, ""
	case order.Prometheus == nil:
		return nil, "a web scaleDownOrder is not read yet; use prometheus with instanceLabel"
	}
	samples, err := hookrun.QuerySamples(ctx, c.cfg.Egress.Policy(e.ref.Namespace), order.Prometheus)
	if err != nil {
		return nil, err.Error()
	}
	values := make(map[int]float64, len(samples))
	for _, s := range samples {
		label, ok := s.Labels[order.InstanceLabel]
		if !ok {
			continue
		}
		if id, ok := instanceOf(fleet, label); ok {
			values[id] = s.Value
		}
	}
	if len(values) == 0 && len(samples) > 0 {
		return nil, fmt.Sprintf("no sample's label %s names an instance", order.InstanceLabel)
	}
	return values, ""
}
