package manifest

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// Validate implements Object: the instances' part as its workload
// (application or process) would be validated, then the strategy.
func (d *Deployment) Validate(r Resolver) field.ErrorList {
	v := newValidator(r, d.Metadata.Namespace)
	tp := field.Path("spec.template.spec")
	ts := d.Spec.Template.Spec
	switch {
	case len(ts.Containers) > 0 && len(ts.Processes) > 0:
		v.invalid(tp.Child("processes"), "a template holds containers or processes, not both")
	case len(ts.Containers) == 0 && len(ts.Processes) == 0:
		v.invalid(tp.Child("containers"), "required: containers (Docker pods) or processes")
	default:
		v.errs = append(v.errs, d.workload().Validate(r)...)
	}
	if len(ts.Processes) > 0 {
		// A process workload has no template metadata to check it.
		v.templateMeta("spec.template.metadata", d.Spec.Template.Metadata)
		if len(ts.Containers) == 0 && (ts.NetworkMode != "" || ts.NetworkType != "" || ts.NetLimit != nil) {
			v.invalid(tp.Child("networkMode"), "processes run in the agent's network: networkMode, networkType and netLimit are for containers")
		}
	}
	switch {
	case d.Spec.Strategy != nil && d.Spec.UpdateStrategy != nil:
		v.invalid("spec.strategy", "give spec.strategy (the original's form) or spec.updateStrategy, not both")
	case d.Spec.Strategy != nil:
		v.originalStrategy("spec.strategy", d.Spec.Strategy)
	case d.Spec.UpdateStrategy != nil:
		v.updateStrategy("spec.updateStrategy", d.Spec.UpdateStrategy, d.Spec.Instance, len(ts.Processes) > 0)
	}
	if pd := d.Spec.PreDeleteUpdateStrategy; pd != nil {
		v.inRange("spec.preDeleteUpdateStrategy.timeoutSeconds", pd.TimeoutSeconds, MaxIntervalSeconds)
		if pd.Hook != nil {
			v.hookStep(field.Path("spec.preDeleteUpdateStrategy.hook"), pd.Hook)
		}
	}
	return v.errs
}

func (v *validator) originalStrategy(p field.Path, s *Strategy) {
	oneOf(v, p.Child("type"), s.Type, UpdateRolling, UpdateInPlace, UpdateHotPatch)
	ru := s.RollingUpdate
	if ru == nil {
		return
	}
	rp := p.Child("rollingupdate")
	v.budget(rp, "maxUnavilable", ru.MaxUnavailable, ru.MaxSurge)
	v.pacing(rp, ru.UpgradeDuration, ru.RollingOrder)
}

func (v *validator) updateStrategy(p field.Path, s *UpdateStrategy, instances int, processes bool) {
	oneOf(v, p.Child("type"), s.Type, UpdateRolling, UpdateInPlace, UpdateHotPatch)
	v.nonNegative(p.Child("partition"), s.Partition)
	v.budget(p, "maxUnavailable", s.MaxUnavailable, s.MaxSurge)
	v.pacing(p, s.UpgradeDuration, s.RollingOrder)
	v.inRange(p.Child("allocatedTimeoutSeconds"), s.AllocatedTimeoutSeconds, MaxIntervalSeconds)
	if ip := s.InPlaceUpdateStrategy; ip != nil {
		v.inRange(p.Child("inPlaceUpdateStrategy").Child("gracePeriodSeconds"), ip.GracePeriodSeconds, MaxWaitSeconds)
	}
	if hp := s.HotPatchUpdateStrategy; hp != nil {
		hpp := p.Child("hotPatchUpdateStrategy")
		if processes {
			v.invalid(hpp, "processes reload with their reloadCmd; hotPatchUpdateStrategy is for containers")
		}
		if hp.Signal != "" && len(hp.Command) > 0 {
			v.invalid(hpp.Child("command"), "give signal or command, not both")
		}
		if hp.Signal != "" {
			if _, err := ParseSignal(hp.Signal); err != nil {
				v.invalid(hpp.Child("signal"), "%v", err)
			}
		}
	}
	if c := s.Canary; c != nil {
		sp := p.Child("canary").Child("steps")
		if len(c.Steps) == 0 {
			v.required(sp)
		}
		for i, step := range c.Steps {
			v.canaryStep(sp.Index(i), step, instances)
		}
	}
}

// budget checks maxUnavailable and maxSurge: counts or percentages ≥ 0,
// not both zero (the update could never progress).
func (v *validator) budget(p field.Path, unavailableName string, unavailable, surge *IntOrPercent) {
	for _, c := range []struct {
		p field.Path
		q *IntOrPercent
	}{{p.Child(unavailableName), unavailable}, {p.Child("maxSurge"), surge}} {
		if c.q == nil {
			continue
		}
		if c.q.Value < 0 || (c.q.Percent && c.q.Value > 100) {
			v.invalid(c.p, "want a count ≥ 0 or a percentage from 0%% to 100%%, got %s", c.q)
		}
	}
	if unavailable != nil && unavailable.Value == 0 && (surge == nil || surge.Value == 0) {
		v.invalid(p.Child("maxSurge"), "maxSurge and %s cannot both be 0: the update could never progress", unavailableName)
	}
}

func (v *validator) pacing(p field.Path, upgradeDuration int, rollingOrder string) {
	v.nonNegative(p.Child("upgradeDuration"), upgradeDuration)
	if rollingOrder != "" {
		oneOf(v, p.Child("rollingOrder"), rollingOrder, RollingCreateFirst, RollingDeleteFirst)
	}
}

func (v *validator) canaryStep(p field.Path, s CanaryStep, instances int) {
	set := 0
	for _, present := range []bool{s.Partition != nil, s.Pause != nil, s.Hook != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		v.invalid(p, "a step is exactly one of partition, pause and hook")
		return
	}
	switch {
	case s.Partition != nil:
		v.nonNegative(p.Child("partition"), *s.Partition)
	case s.Pause != nil && s.Pause.Duration != nil:
		if *s.Pause.Duration <= 0 {
			v.invalid(p.Child("pause").Child("duration"), "want seconds > 0, or no duration to pause until promote, got %d", *s.Pause.Duration)
		}
	case s.Hook != nil:
		v.hookStep(p.Child("hook"), s.Hook)
	}
}

// hookStep checks a hook: its template exists (when the resolver knows
// hook templates) and takes the step's arguments, the scheduler giving
// the ones SchedulerArg names.
func (v *validator) hookStep(p field.Path, h *HookStep) {
	if h.TemplateName == "" {
		v.required(p.Child("templateName"))
		return
	}
	templates, ok := v.resolver.(HookTemplates)
	if !ok {
		return
	}
	t, found := templates.HookTemplate(v.namespace, h.TemplateName)
	if !found {
		v.invalid(p.Child("templateName"), "hook template %q not found in namespace %q", h.TemplateName, v.namespace)
		return
	}
	v.errs = append(v.errs, HookArgProblems(t, h.Args, p, SchedulerArg)...)
}

// ParseSignal reads a signal name ("SIGHUP", "HUP", any case) or number.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if unix.SignalName(syscall.Signal(n)) == "" {
			return 0, fmt.Errorf("unknown signal number %d", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q (want a name such as SIGHUP, or a number)", s)
}
