package scheduler

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Notices are seed 002's notifyController events: an instance exited,
// went missing, runs without an IP in a CNI network, or restarts too
// often. The core makes them in the step that changes the instance, and
// they are stored with the instance's record in one transaction
// (Write.Notices): a crash before that write loses the change too, and
// Mesos resending the update makes the notice again; after it, the
// notice is in the outbox pkg/notify delivers from. The scheduler's own
// kills (scale-down, delete, update, reschedule, health) make no exit
// notice.

// FlappingRule says when restarts make an instance flap: more than
// Restarts restarts within Window. Zero values take deployd's defaults
// (-maxRestartTimes 3, -restartInfoClearInterval 30 minutes).
type FlappingRule struct {
	Restarts int
	Window   time.Duration
}

// The flapping rule's defaults, which bcs-scheduler's flags show.
const (
	DefaultFlappingRestarts = 3
	DefaultFlappingWindow   = 30 * time.Minute
)

func (r FlappingRule) withDefaults() FlappingRule {
	if r.Restarts <= 0 {
		r.Restarts = DefaultFlappingRestarts
	}
	if r.Window <= 0 {
		r.Window = DefaultFlappingWindow
	}
	return r
}

// notice makes a notice about the current launch of inst; it is stored
// with the instance's record (a successor's, with its moving instance's).
func (c *Core) notice(inst *instance, t registry.NoticeType, state, message string) {
	owner := inst
	for owner.parent != nil {
		owner = owner.parent
	}
	c.notices[owner] = append(c.notices[owner], registry.Notice{
		ID: registry.NoticeID(c.now, inst.rec.ID, t), Type: t,
		Namespace: inst.rec.Namespace, App: inst.rec.App, Instance: inst.rec.Index, TaskGroupID: inst.rec.ID,
		AgentID: inst.rec.AgentID, Host: inst.rec.Host, State: state, Time: c.now, Message: message,
	})
	c.persist(inst)
}

// noticeEnd tells that a launch ended on its own: missing when Mesos lost
// track of its tasks, exit otherwise.
func (c *Core) noticeEnd(inst *instance, st mesos.TaskStatus, reason string) {
	t := registry.NoticeExit
	switch st.GetState() {
	case mesos.TASK_LOST, mesos.TASK_UNREACHABLE, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_DROPPED, mesos.TASK_UNKNOWN:
		t = registry.NoticeMissing
	}
	c.notice(inst, t, st.GetState().String(), reason)
}

// countRestart remembers a restart of inst and tells once per window
// that it flaps. Only the last Restarts+1 restarts within the window are
// kept: no more are needed to judge.
func (c *Core) countRestart(inst *instance) {
	rule := c.cfg.Flapping.withDefaults()
	since := c.now.Add(-rule.Window)
	recent := make([]time.Time, 0, rule.Restarts+1)
	for _, at := range inst.rec.RecentRestarts {
		if at.After(since) {
			recent = append(recent, at)
		}
	}
	recent = append(recent, c.now)
	if len(recent) > rule.Restarts+1 {
		recent = recent[len(recent)-rule.Restarts-1:]
	}
	inst.rec.RecentRestarts = recent
	if len(recent) <= rule.Restarts || inst.rec.FlappingNotified.After(since) {
		return
	}
	inst.rec.FlappingNotified = c.now
	c.notice(inst, registry.NoticeFlapping, "", fmt.Sprintf("restarted more than %d times within %s", rule.Restarts, rule.Window))
}

// checkIP tells that a container launch in a CNI network runs without an
// IP: neither the RUNNING status's container_status nor its data (the
// container executor's proto.ContainerInfo) names one. A status without
// data (the master's answer to a reconciliation) says nothing about it.
func (c *Core) checkIP(inst *instance, st mesos.TaskStatus) {
	network, isCNI := strings.CutSuffix(inst.rec.Network, "/cni")
	if !isCNI || len(st.Data) == 0 || statusIP(st) != "" {
		return
	}
	var info proto.ContainerInfo
	if json.Unmarshal(st.Data, &info) != nil || info.IPAddress != "" {
		return
	}
	c.notice(inst, registry.NoticeNoIP, st.GetState().String(),
		fmt.Sprintf("task %s runs in CNI network %s without an IP address", st.TaskID.Value, network))
}
