package scheduler

import (
	"context"
	"errors"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// DefaultAgentSyncInterval is how often the driver reads the master's
// agents while subscribed.
const DefaultAgentSyncInterval = 30 * time.Second

// agentSyncSettle is how long after a hint that an agent changed the
// master's agents are read.
const agentSyncSettle = time.Second

// syncAgents keeps the stored agents in line with the master the driver
// is subscribed to: at once, then every AgentSyncInterval and whenever
// poked until ctx ends (the subscription ended), it lists the master's
// agents through its operator API (GET_AGENTS) and stores their master
// view — state, drain, total resources —, dropping the records of agents
// the master does not know (those of an old master; agents it recovered
// from its registry are known), and hands the list to the core (listed):
// daemonsets learn new agents from it. A master without the operator API
// is left alone.
func (d *Driver) syncAgents(ctx context.Context, master string, poked <-chan struct{}, listed func(AgentsListed) error) {
	client, err := mesosoperator.New(master, mesosoperator.WithCodec(d.cfg.Encoding),
		mesosoperator.WithHTTPClient(d.cfg.Mesos.HTTPClient(mesosoperator.DefaultTimeout)))
	if err != nil {
		d.log.Error("agent sync: master URL", "master", master, "err", err)
		return
	}
	for {
		err := d.syncAgentsOnce(ctx, client, listed)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errdefs.ErrInvalidArgument):
			d.log.Warn("agent sync: the master refused GET_AGENTS; agents are known from offers only", "master", client.Endpoint(), "err", err)
			return
		case err != nil:
			d.log.Warn("agent sync", "master", client.Endpoint(), "err", err)
		}
		select {
		case <-d.cfg.Clock.After(time.Duration(d.agentSyncInterval.Load())):
		case <-poked:
			// Let the change settle: the master marks a drain DRAINED
			// only once our acknowledgements of its kills arrived.
			select {
			case <-d.cfg.Clock.After(agentSyncSettle):
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (d *Driver) syncAgentsOnce(ctx context.Context, client *mesosoperator.Client, toCore func(AgentsListed) error) error {
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	at := d.cfg.Clock.Now()
	agents, err := client.GetAgents(callCtx)
	if err != nil {
		return err
	}
	forCore := AgentsListed{At: at, Agents: make([]ListedAgent, len(agents))}
	for i, a := range agents {
		d.probes.learnAgent(a.ID, a.Endpoint())
		forCore.Agents[i] = ListedAgent{ID: a.ID, Hostname: a.Hostname, Attributes: a.Attributes,
			Active: a.Active && !a.Deactivated && a.Drain == nil}
	}
	if err := toCore(forCore); err != nil {
		return err
	}
	listed := make([]registry.ListedAgent, len(agents))
	for i, a := range agents {
		m := registry.AgentMaster{Active: a.Active, Deactivated: a.Deactivated, Recovered: a.Recovered,
			Total: registry.AgentResources{CPUs: a.Total.CPUs, MemMB: a.Total.Mem, DiskMB: a.Total.Disk}}
		for _, r := range a.Total.Ports {
			m.Total.Ports += int(r.End - r.Begin + 1)
		}
		if a.Drain != nil {
			m.Drain = string(a.Drain.State)
		}
		listed[i] = registry.ListedAgent{ID: a.ID, Hostname: a.Hostname, Attributes: shownAttributes(a.Attributes), Endpoint: a.Endpoint(), Master: m}
	}
	dropped, err := d.cfg.Registry.SyncAgents(ctx, listed)
	if len(dropped) > 0 {
		d.log.Info("agents the master does not know dropped", "agents", dropped, "master", client.Endpoint())
	}
	return err
}

// agentChangeHint reports whether an event says that an agent changed in
// a way the master's list shows: the master drains it (its kills carry
// REASON_AGENT_DRAINING), it is gone (FAILURE of the agent, or tasks
// gone with it), or its maintenance changed (inverse offers).
func agentChangeHint(e *scheduler.Event) bool {
	switch e.GetType() {
	case scheduler.Event_INVERSE_OFFERS, scheduler.Event_RESCIND_INVERSE_OFFER:
		return true
	case scheduler.Event_FAILURE:
		return e.GetFailure().ExecutorID == nil
	case scheduler.Event_UPDATE:
		st := e.GetUpdate().GetStatus()
		return agentLeft(st.GetReason())
	}
	return false
}

// agentLeft reports whether a task status's reason says that its agent
// is draining, removed or disconnected.
func agentLeft(reason mesos.TaskStatus_Reason) bool {
	switch reason {
	case mesos.REASON_AGENT_DRAINING, mesos.REASON_AGENT_REMOVED, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, mesos.REASON_AGENT_DISCONNECTED:
		return true
	}
	return false
}
