package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// refreshStatuses writes the summary state of the applications the step
// touched when it changed. A status reads only the application's and its
// instances' state, never the time: an application nothing touched keeps
// its status.
func (c *Core) refreshStatuses() {
	touched := slices.SortedFunc(maps.Keys(c.touched), func(x, y *app) int { return cmp.Compare(x.key(), y.key()) })
	clear(c.touched)
	for _, a := range touched {
		if c.apps[a.key()] != a {
			continue // removed
		}
		st := c.appStatus(a)
		if st != a.status {
			a.status = st
			c.write(Write{AppStatus: &st})
		}
	}
}

func (c *Core) appStatus(a *app) AppStatus {
	st := AppStatus{Namespace: a.rec.Namespace, Name: a.rec.Name}
	replicas := a.replicas()
	if a.daemon() {
		st.Daemonset, st.Desired = true, replicas
	}
	running, stopped, pending, held := 0, 0, 0, 0
	var failed *instance // the lowest ID failed or waiting
	span := a.spanOf(replicas)
	for _, inst := range a.sortedInstances() {
		wanted := a.daemon() || inst.rec.Index < span && !a.hole(inst.rec.Index)
		if !wanted && inst.rec.Message == allocatedMessage {
			held++
		}
		if inst.phase() == PhasePending {
			pending++
		}
		switch {
		case wanted && (inst.phase() == PhaseRunning || inst.successor != nil && inst.successor.phase() == PhaseRunning):
			running++
		case wanted && (inst.phase() == PhaseStopped || inst.killReason() == KillStop):
			stopped++
		case inst.phase() == PhaseFailed, inst.rec.WaitingFor != "":
			if failed == nil || inst.rec.Index < failed.rec.Index {
				failed = inst
			}
		}
	}
	unplaced := c.unplacedNow(a)
	switch {
	case a.rec.State == registry.AppDeleting:
		st.State = registry.AppDeleting
	case a.tmplErr != nil:
		st.State, st.Message = registry.AppAbnormal, a.tmplErr.Error()
	case unplaced != "" && !a.moveWaits:
		st.State, st.Message = registry.AppAbnormal, unplaced
	case failed != nil:
		st.State, st.Message = registry.AppAbnormal, "instance "+strconv.Itoa(failed.rec.Index)+": "+failed.rec.Message
	case running+stopped == replicas:
		// Running: every instance runs but those the operator stopped.
		st.State = registry.AppRunning
		if a.moveWaits {
			st.Message = unplaced // every instance runs; a move cannot go yet
		}
		if stopped > 0 && st.Message == "" {
			st.Message = fmt.Sprintf("%d/%d instances stopped", stopped, replicas)
		} else if stopped > 0 {
			st.Message = fmt.Sprintf("%d/%d instances stopped; %s", stopped, replicas, st.Message)
		}
	default:
		st.State, st.Message = registry.AppDeploying, fmt.Sprintf("%d/%d instances running", running, replicas)
		if stopped > 0 {
			st.Message += fmt.Sprintf(", %d stopped", stopped)
		}
		if wait := c.engineWait(); wait != "" && pending > 0 {
			st.Message += fmt.Sprintf("; %d waiting to launch: %s", pending, wait)
		}
	}
	if held > 0 {
		st.Message = strings.TrimPrefix(st.Message+fmt.Sprintf("; %d %s", held, allocatedMessage), "; ")
	}
	return st
}
