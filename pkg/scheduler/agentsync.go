package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosoperator"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// DefaultAgentSyncInterval is how often the driver reads the master's
// agents while subscribed.
const DefaultAgentSyncInterval = 30 * time.Second

// syncAgents keeps the stored agents in line with the master the driver
// is subscribed to: at once, then every AgentSyncInterval until ctx ends
// (the subscription ended), it lists the master's agents through its
// operator API (GET_AGENTS) and stores their master view — state, drain,
// total resources —, dropping the records of agents the master does not
// know (those of an old master; agents it recovered from its registry
// are known). A master without the operator API is left alone.
func (d *Driver) syncAgents(ctx context.Context, master string) {
	client, err := mesosoperator.New(master, mesosoperator.WithCodec(d.cfg.Encoding))
	if err != nil {
		d.log.Error("agent sync: master URL", "master", master, "err", err)
		return
	}
	for {
		err := d.syncAgentsOnce(ctx, client)
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
		case <-d.cfg.Clock.After(d.cfg.AgentSyncInterval):
		case <-ctx.Done():
			return
		}
	}
}

func (d *Driver) syncAgentsOnce(ctx context.Context, client *mesosoperator.Client) error {
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	agents, err := client.GetAgents(callCtx)
	if err != nil {
		return err
	}
	listed := make([]registry.ListedAgent, len(agents))
	for i, a := range agents {
		attrs := map[string]string{}
		for name, v := range a.Attributes {
			attrs[name] = v.String()
		}
		m := registry.AgentMaster{Active: a.Active, Deactivated: a.Deactivated, Recovered: a.Recovered,
			Total: registry.AgentResources{CPUs: a.Total.CPUs, MemMB: a.Total.Mem, DiskMB: a.Total.Disk}}
		for _, r := range a.Total.Ports {
			m.Total.Ports += int(r.End - r.Begin + 1)
		}
		if a.Drain != nil {
			m.Drain = string(a.Drain.State)
		}
		listed[i] = registry.ListedAgent{ID: a.ID, Hostname: a.Hostname, Attributes: attrs, Master: m}
	}
	dropped, err := d.cfg.Registry.SyncAgents(ctx, listed)
	if len(dropped) > 0 {
		d.log.Info("agents the master does not know dropped", "agents", dropped, "master", client.Endpoint())
	}
	return err
}
