package autoscaler

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/bcs-mesos/bcs-mesos/pkg/autoscale"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
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

// orderValues reads e's scale-down order for the instances a scale-down
// may choose: each one's value by ID, or why they could not be read.
// An instance whose value is missing or erred has none (Victims puts it
// after those with one); when none of them has one because the source
// failed (the query, or every web call), the scale-down waits.
// Without an order there are none.
func (c *Controller) orderValues(ctx context.Context, e *entry, fleet Fleet) (map[int]float64, string) {
	order := e.manifest.Spec.ScaleDownOrder
	if order == nil {
		return nil, ""
	}
	var choosable []Instance
	for _, inst := range fleet.Instances {
		if !inst.Allocated && !inst.Going && !inst.RunningSince.IsZero() {
			choosable = append(choosable, inst)
		}
	}
	target := Ref{e.ref.Namespace, e.spec.Target.Name}
	readings, err := c.instanceValues(ctx, target, *order, choosable, make(chan struct{}, c.cfg.MaxCalls))
	if err != nil {
		return nil, err.Error()
	}
	values := make(map[int]float64, len(readings))
	failed := ""
	for i, r := range readings {
		if r.value == nil && r.err == nil {
			continue
		}
		v := autoscale.ReadingOf(r.value, r.err)
		if v.Err != "" {
			if failed == "" {
				failed = fmt.Sprintf("instance %d: %s", choosable[i].ID, v.Err)
			}
			continue
		}
		values[choosable[i].ID] = v.Value
	}
	if len(values) == 0 && failed != "" {
		return nil, failed
	}
	return values, ""
}

// instanceReading is one instance's value of a per-instance source: a
// value, an error, or neither when a Prometheus query has no sample of
// the instance.
type instanceReading struct {
	value any
	err   error
}

// instanceValues reads source for instances of the workload target:
// one Prometheus query whose samples name their instance (its ID or its
// task group ID) in InstanceLabel, or one web call per instance rendered
// with its arguments. Each call holds one of slots while under way and
// runs under the egress policy of target's namespace. The readings
// follow instances; a query that fails, or whose samples name none of
// the instances, is the error.
func (c *Controller) instanceValues(ctx context.Context, target Ref, source manifest.InstanceValue, instances []Instance, slots chan struct{}) ([]instanceReading, error) {
	policy := c.cfg.Egress.Policy(target.Namespace)
	if source.Prometheus != nil {
		slots <- struct{}{}
		samples, err := hookrun.QuerySamples(ctx, policy, source.Prometheus)
		<-slots
		if err != nil {
			return nil, err
		}
		return samplesOf(samples, source.InstanceLabel, instances)
	}
	out := make([]instanceReading, len(instances))
	var wg sync.WaitGroup
	for i, inst := range instances {
		provider, errs := hook.RenderProvider(field.Path("web"), manifest.HookProvider{Web: source.Web}, instanceArgs(target, inst))
		if len(errs) > 0 {
			out[i].err = errs
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			out[i].value, out[i].err = hookrun.Call(ctx, policy, provider)
		}()
	}
	wg.Wait()
	return out, nil
}

// samplesOf gives each of instances the value of the sample whose label
// names it.
func samplesOf(samples []hookrun.Sample, label string, instances []Instance) ([]instanceReading, error) {
	at := make(map[string]int, 2*len(instances))
	for i, inst := range instances {
		at[strconv.Itoa(inst.ID)] = i
		at[inst.TaskGroupID] = i
	}
	out := make([]instanceReading, len(instances))
	matched := 0
	for _, s := range samples {
		if i, ok := at[s.Labels[label]]; ok {
			out[i].value = s.Value
			matched++
		}
	}
	if matched == 0 && len(samples) > 0 {
		return nil, fmt.Errorf("none of the %d samples has a label %s naming an instance", len(samples), label)
	}
	return out, nil
}

// instanceArgs are the arguments a call made for inst gets, those its
// PreDeleteHook gets.
func instanceArgs(target Ref, inst Instance) []manifest.HookArg {
	args := make([]manifest.HookArg, 0, 6+len(inst.Ports))
	args = append(args,
		manifest.HookArg{Name: manifest.ArgNamespace, Value: target.Namespace},
		manifest.HookArg{Name: manifest.ArgAppName, Value: target.Name},
		manifest.HookArg{Name: manifest.ArgPodName, Value: inst.TaskGroupID},
		manifest.HookArg{Name: manifest.ArgInstanceID, Value: strconv.Itoa(inst.ID)},
		manifest.HookArg{Name: manifest.ArgHostIP, Value: inst.HostIP},
		manifest.HookArg{Name: manifest.ArgPodIP, Value: inst.HostIP})
	for _, p := range inst.Ports {
		args = append(args, manifest.HookArg{Name: manifest.ArgPortPrefix + p.Name, Value: strconv.FormatUint(uint64(p.Port), 10)})
	}
	return args
}
