package podruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/healthcheck"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// group is one task group and its pod.
type group struct {
	rt  *Runtime
	id  string // pod ID
	rep executor.Reporter
	// network is how checks reach the pod: HOST, BRIDGE, NONE, USER or
	// CNI.
	network string
	order   []string

	mu    sync.Mutex
	pod   *pod.Pod
	tasks map[string]*groupTask
	// healthFailure is set once a health check's Kill verdict stopped
	// the pod: every task then ends TASK_FAILED with this message.
	healthFailure string
	unhealthyTask string
	// updates applies the update messages one at a time.
	updates executor.Updates
}

// groupTask is the runtime's view of one task of the group.
type groupTask struct {
	t             executor.Task
	killRequested bool // the driver reported Killing itself
	running       bool // reached RUNNING once
	terminal      bool
	stopping      bool // killing or terminal: health results no longer count
	info          proto.ContainerInfo
	healthCancel  context.CancelFunc
	healthy       map[int]bool
	lastHealthy   *bool
}

func newGroup(rt *Runtime, id string, tasks []executor.Task, rep executor.Reporter) *group {
	g := &group{rt: rt, id: id, rep: rep, tasks: map[string]*groupTask{}}
	for _, t := range tasks {
		g.tasks[t.ID()] = &groupTask{t: t}
		g.order = append(g.order, t.ID())
	}
	g.network = networkOf(rt.cfg.Network, tasks)
	return g
}

// networkOf names how the pod's network is reached.
func networkOf(mode pod.NetworkType, tasks []executor.Task) string {
	if len(tasks) == 0 || tasks[0].Spec == nil || tasks[0].Spec.Container == nil {
		return ""
	}
	c := tasks[0].Spec.Container
	if mode == pod.NetworkCNI || (mode == "" && strings.EqualFold(c.NetworkType, string(pod.NetworkCNI))) {
		return "CNI"
	}
	if c.NetworkMode == "" {
		return pod.NetworkBridge
	}
	return strings.ToUpper(c.NetworkMode)
}

func (g *group) setPod(p *pod.Pod) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pod = p
}

func (g *group) getPod() *pod.Pod {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pod
}

func (g *group) push(r executor.Report) { g.rt.queue.push(g.rep, r) }

// withContainer is r with the task's container as info describes it: the
// data (proto.ContainerInfo) and its address.
func withContainer(r executor.Report, info proto.ContainerInfo) executor.Report {
	r.Data, _ = json.Marshal(info)
	if info.IPAddress != "" {
		r.IPAddresses = []string{info.IPAddress}
	}
	return r
}

// failAll fails every task of a group that never got a pod.
func (g *group) failAll(reason mesos.TaskStatus_Reason, msg string) {
	g.mu.Lock()
	for _, gt := range g.tasks {
		gt.terminal = true
	}
	g.mu.Unlock()
	for _, id := range g.order {
		r := reason
		g.push(executor.Report{TaskID: id, State: taskstate.Failed, Reason: &r, Message: msg})
	}
}

// onUpdate turns a pod task change into a report. The pod calls it with
// its lock held: it must not call back into the pod.
func (g *group) onUpdate(u pod.Update) {
	g.mu.Lock()
	gt := g.tasks[u.TaskID]
	if gt == nil {
		g.mu.Unlock()
		return
	}
	r := executor.Report{TaskID: u.TaskID, Message: u.Message}
	switch u.State {
	case taskstate.Starting:
		r.State = taskstate.Starting
	case taskstate.Running:
		r.State = taskstate.Running
		gt.running = true
	case taskstate.Killing:
		gt.stopping = true
		g.stopHealthLocked(gt)
		if gt.killRequested {
			g.mu.Unlock()
			return // the driver reported Killing when the KILL came
		}
		r.State = taskstate.Killing
	case taskstate.Finished:
		r.State = taskstate.Finished
	case taskstate.Failed:
		r.State = taskstate.Failed
		if !gt.running {
			reason := reasonLaunchFailed
			r.Reason = &reason
		}
	case taskstate.Killed:
		r.State = taskstate.Killed
	default:
		g.mu.Unlock()
		return
	}
	if u.Info.ID != "" {
		gt.info = u.Info
		r = withContainer(r, u.Info)
	}
	if u.State.Terminal() {
		gt.terminal, gt.stopping = true, true
		g.stopHealthLocked(gt)
		if g.healthFailure != "" {
			reason := reasonHealth
			r.State, r.Reason, r.Message = taskstate.Failed, &reason, g.healthFailure
			if u.TaskID == g.unhealthyTask {
				f := false
				r.Healthy = &f
			}
		}
	}
	g.push(r)
	if u.State == taskstate.Running {
		g.startHealthLocked(gt, u.Info)
	}
	g.mu.Unlock()
}

// kill stops the pod with grace; taskID is the task the driver reported
// Killing for ("" for a shutdown, capping every task's grace at grace).
func (g *group) kill(taskID string, grace time.Duration) {
	g.mu.Lock()
	p := g.pod
	if gt := g.tasks[taskID]; gt != nil {
		gt.killRequested = true
	}
	for _, gt := range g.tasks {
		gt.stopping = true
		g.stopHealthLocked(gt)
	}
	if taskID == "" {
		longest := time.Duration(0)
		for _, gt := range g.tasks {
			longest = max(longest, gt.t.KillGrace)
		}
		grace = min(grace, longest)
	}
	g.mu.Unlock()
	if p == nil {
		return // never became a pod: already failed
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace+teardownAllowance)
		defer cancel()
		if err := p.Kill(ctx, syscall.SIGTERM, grace); err != nil {
			g.rt.cfg.Logger.Warn("kill pod", "pod", g.id, "err", err)
		}
	}()
}

// pauseHealth stops taskID's health checks while its container is stopped
// and restarted or replaced (restart, update-env): a check failing against
// a container being replaced is no verdict on the task. rearm starts them
// again.
func (g *group) pauseHealth(taskID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gt := g.tasks[taskID]; gt != nil {
		g.stopHealthLocked(gt)
	}
}

// rearm starts taskID's health checks afresh against its container as it
// is now. A non-empty msg says the container was restarted in place or
// re-created: the task is reported RUNNING again with its new container
// data and msg.
func (g *group) rearm(taskID, msg string) {
	p := g.getPod()
	info, err := p.Info(taskID)
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.tasks[taskID]
	if gt == nil || gt.stopping {
		return
	}
	gt.info = info
	if msg != "" {
		g.push(withContainer(executor.Report{TaskID: taskID, State: taskstate.Running, Message: msg, Healthy: gt.lastHealthy}, info))
	}
	g.startHealthLocked(gt, info)
}

// reportStatus sends a fresh RUNNING status of a running task.
func (g *group) reportStatus(taskID string) error {
	p := g.getPod()
	info, err := p.Info(taskID)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.tasks[taskID]
	if gt == nil || gt.terminal || !gt.running {
		return fmt.Errorf("task %q is not running: %w", taskID, errdefs.ErrConflict)
	}
	gt.info = info
	g.push(withContainer(executor.Report{TaskID: taskID, State: taskstate.Running, Healthy: gt.lastHealthy}, info))
	return nil
}

// startHealthLocked starts gt's health checks against its container
// described by info. Caller holds g.mu.
func (g *group) startHealthLocked(gt *groupTask, info proto.ContainerInfo) {
	checks := gt.t.Spec.HealthChecks
	if len(checks) == 0 || gt.stopping {
		return
	}
	g.stopHealthLocked(gt)
	ctx, cancel := context.WithCancel(context.Background())
	gt.healthCancel = cancel
	gt.healthy = map[int]bool{}
	for i, hc := range checks {
		prober, err := g.prober(gt.t, hc, info)
		if err != nil {
			prober = brokenProbe{err}
		}
		c := &healthcheck.Checker{Prober: prober, Policy: healthcheck.PolicyOf(hc), Clock: g.rt.cfg.Clock}
		go c.Run(ctx, func(res healthcheck.Result) { g.healthResult(ctx, gt, i, res) })
	}
}

func (g *group) stopHealthLocked(gt *groupTask) {
	if gt.healthCancel != nil {
		gt.healthCancel()
		gt.healthCancel = nil
	}
}

// healthResult turns check results into TaskStatus.healthy (reported on
// change: healthy once every check passed, unhealthy as soon as one
// fails) and, on a Kill verdict, kills the pod and fails every task with
// the check's reason.
func (g *group) healthResult(ctx context.Context, gt *groupTask, i int, res healthcheck.Result) {
	if res.InGrace {
		return
	}
	g.mu.Lock()
	if ctx.Err() != nil || gt.terminal || gt.stopping || g.healthFailure != "" {
		g.mu.Unlock()
		return
	}
	checks := gt.t.Spec.HealthChecks
	if res.Kill {
		g.healthFailure = fmt.Sprintf("task %q: health check %s failed %d times in a row: %s",
			gt.t.ID(), strings.ToUpper(checks[i].Type), res.ConsecutiveFailures, res.Message)
		g.unhealthyTask = gt.t.ID()
		grace := gt.t.KillGrace
		p := g.pod
		msg := g.healthFailure
		g.mu.Unlock()
		g.rt.cfg.Logger.Warn("killing the pod", "pod", g.id, "why", msg)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), grace+teardownAllowance)
			defer cancel()
			if err := p.Kill(ctx, syscall.SIGTERM, grace); err != nil {
				g.rt.cfg.Logger.Warn("kill pod", "pod", g.id, "err", err)
			}
		}()
		return
	}
	gt.healthy[i] = res.Healthy
	failing := false
	for _, ok := range gt.healthy {
		failing = failing || !ok
	}
	if !failing && len(gt.healthy) < len(checks) {
		g.mu.Unlock()
		return // not every check has passed yet
	}
	verdict := !failing
	changed := gt.lastHealthy == nil || *gt.lastHealthy != verdict
	gt.lastHealthy = &verdict
	if changed {
		reason := reasonHealth
		msg := ""
		if !verdict {
			msg = res.Message
		}
		g.push(withContainer(executor.Report{TaskID: gt.t.ID(), State: taskstate.Running, Reason: &reason, Message: msg, Healthy: &verdict}, gt.info))
	}
	g.mu.Unlock()
}
