package devcluster

import (
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Agent deactivation and draining as in Mesos 1.12 (src/master/http.cpp
// _drainAgent, _deactivateAgent, _reactivateAgent;
// Master::checkAndTransitionDrainingAgent; src/slave/slave.cpp
// Slave::drain and the draining branch of Slave::statusUpdate).

// drainAgent handles DRAIN_AGENT: the agent is deactivated (no offers,
// outstanding ones rescinded) and kills every task, each with its kill
// policy capped by maxGrace; it is DRAINED once every task is terminal
// and its terminal update acknowledged, or marked gone then when
// markGone is set. Caller holds m.mu.
func (m *master) drainAgent(agentID string, maxGrace *time.Duration, markGone bool) *httpError {
	a := m.agents[agentID]
	if a == nil {
		return &httpError{http.StatusBadRequest, "Unknown agent"}
	}
	if mc := m.machines[machineKey(a.machineID())]; mc != nil && mc.mode != mesos.UP {
		return &httpError{http.StatusBadRequest, "Agent " + a.id + " is part of a maintenance schedule under Machine " + describeMachine(mc.id)}
	}
	config := mesos.DrainConfig{MarkGone: &markGone}
	if maxGrace != nil {
		config.MaxGracePeriod = &mesos.DurationInfo{Nanoseconds: maxGrace.Nanoseconds()}
	}
	a.drain = &mesos.DrainInfo{State: mesos.DrainState_DRAINING, Config: config}
	m.deactivate(a)
	a.drainStarted = m.cfg.Clock.Now()
	m.log().Info("draining agent", "agent", a.id, "hostname", a.info.Hostname, "tasks", len(a.tasks), "max_grace_period", maxGrace, "mark_gone", markGone)
	for _, t := range a.tasks {
		a.killTask(t, drainKillPolicy(config, t.info.KillPolicy))
	}
	m.checkDrained(a)
	return nil
}

// drainKillPolicy is the kill policy the agent sends with a draining
// kill: the drain's max_grace_period when the task has no grace period
// or a longer one, else none (the executor applies the task's own).
func drainKillPolicy(config mesos.DrainConfig, task *mesos.KillPolicy) *mesos.KillPolicy {
	if config.MaxGracePeriod == nil {
		return nil
	}
	if task.GetGracePeriod() != nil && task.GetGracePeriod().Nanoseconds <= config.MaxGracePeriod.Nanoseconds {
		return nil
	}
	grace := *config.MaxGracePeriod
	return &mesos.KillPolicy{GracePeriod: &grace}
}

// deactivateAgent handles DEACTIVATE_AGENT. Caller holds m.mu.
func (m *master) deactivateAgent(agentID string) *httpError {
	a := m.agents[agentID]
	if a == nil {
		return &httpError{http.StatusBadRequest, "Unknown agent"}
	}
	m.deactivate(a)
	return nil
}

// deactivate stops offers for an agent and rescinds its offers and
// inverse offers (Master::deactivate). Caller holds m.mu.
func (m *master) deactivate(a *agent) {
	a.deactivated = true
	a.share.setActive(false)
	for _, o := range a.offered {
		m.rescindOffer(o)
	}
	for _, io := range a.inverseOffers {
		m.removeInverseOffer(io, true)
	}
	m.log().Info("agent deactivated", "agent", a.id, "hostname", a.info.Hostname)
}

// reactivateAgent handles REACTIVATE_AGENT: a deactivated agent that is
// not still draining is offered again and forgets its drain. Caller
// holds m.mu.
func (m *master) reactivateAgent(agentID string) *httpError {
	a := m.agents[agentID]
	if a == nil || !a.deactivated {
		return &httpError{http.StatusBadRequest, "Agent is not deactivated"}
	}
	if a.drain != nil && a.drain.State == mesos.DrainState_DRAINING {
		return &httpError{http.StatusBadRequest, "Agent is still in the DRAINING state"}
	}
	a.deactivated, a.drain, a.drainStarted = false, nil, time.Time{}
	a.share.setActive(len(a.awaiting) == 0) // or once recovered (executorBack)
	m.log().Info("agent reactivated", "agent", a.id, "hostname", a.info.Hostname)
	m.triggerAllocation()
	return nil
}

// checkDrained moves a draining agent to DRAINED (or removes it, marked
// gone) once the master tracks no task on it: every task terminal and
// its terminal update acknowledged. Caller holds m.mu.
func (m *master) checkDrained(a *agent) {
	if a.removed || a.drain == nil || a.drain.State != mesos.DrainState_DRAINING {
		return
	}
	for _, fw := range m.frameworks {
		for _, t := range fw.tasks {
			if t.agent == a {
				return
			}
		}
	}
	if a.drain.Config.GetMarkGone() {
		m.log().Info("drained agent marked gone", "agent", a.id)
		m.removeAgent(a, "Agent has been marked gone", false)
		return
	}
	a.drain.State = mesos.DrainState_DRAINED
	m.log().Info("agent drained", "agent", a.id, "hostname", a.info.Hostname)
}

// drainingStatus is what a draining agent does to a status update before
// it forwards it: TASK_KILLING and TASK_KILLED get REASON_AGENT_DRAINING
// and, when the drain marks the agent gone and the framework is
// PARTITION_AWARE, become TASK_GONE_BY_OPERATOR.
func drainingStatus(t *task, st *mesos.TaskStatus) {
	d := t.agent.drain
	if d == nil {
		return
	}
	switch st.GetState() {
	case mesos.TASK_KILLING, mesos.TASK_KILLED:
		st.Reason = mesos.REASON_AGENT_DRAINING.Enum()
		if d.Config.GetMarkGone() && t.fw.partitionAware {
			st.State = mesos.TASK_GONE_BY_OPERATOR.Enum()
		}
	}
}
