package devcluster

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	"github.com/mesos/mesos-go/api/v1/lib/maintenance"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Maintenance primitives as the Mesos 1.12 master has them
// (src/master/http.cpp, src/master/maintenance.cpp and the hierarchical
// allocator): a schedule of windows naming machines; a machine in the
// schedule is DRAINING, its agents offer with its unavailability and the
// frameworks using them get inverse offers; START_MAINTENANCE takes it
// DOWN (its agents are removed), STOP_MAINTENANCE brings it back UP.

// agentIP is the IP every agent of the dev cluster has: all of it listens
// on loopback.
const agentIP = "127.0.0.1"

// machine is the master's record of one machine.
type machine struct {
	id             mesos.MachineID
	mode           mesos.MachineInfo_Mode
	unavailability *mesos.Unavailability
}

// machineKey identifies a machine the way Mesos compares MachineIDs: the
// hostname ignoring case and the IP, each present or not. An agent's
// machine has both, so a schedule must name both to reach it.
func machineKey(id mesos.MachineID) string {
	return strconv.FormatBool(id.Hostname != nil) + "/" + strings.ToLower(id.GetHostname()) + "/" +
		strconv.FormatBool(id.IP != nil) + "/" + id.GetIP()
}

// machineID is the machine an agent runs on: its hostname and IP.
func (a *agent) machineID() mesos.MachineID {
	hostname, ip := a.info.Hostname, agentIP
	return mesos.MachineID{Hostname: &hostname, IP: &ip}
}

// addMachineOf records the machine of a new agent (UP unless the schedule
// names it already). Caller holds m.mu.
func (m *master) addMachineOf(a *agent) {
	id := a.machineID()
	if m.machines[machineKey(id)] == nil {
		m.machines[machineKey(id)] = &machine{id: id, mode: mesos.UP}
	}
}

// unavailabilityOf is the maintenance window of the agent's machine, nil
// when there is none. Caller holds m.mu.
func (m *master) unavailabilityOf(a *agent) *mesos.Unavailability {
	mc := m.machines[machineKey(a.machineID())]
	if mc == nil || mc.unavailability == nil {
		return nil
	}
	u := *mc.unavailability
	return &u
}

// agentsOn lists the registered agents of a machine. Caller holds m.mu.
func (m *master) agentsOn(key string) []*agent {
	var out []*agent
	for _, a := range m.agentOrder {
		if machineKey(a.machineID()) == key {
			out = append(out, a)
		}
	}
	return out
}

// sortedMachineKeys orders machines for deterministic event order.
func (m *master) sortedMachineKeys() []string {
	keys := make([]string, 0, len(m.machines))
	for k := range m.machines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describeMachine is how Mesos prints a MachineID in messages.
func describeMachine(id mesos.MachineID) string {
	switch {
	case id.Hostname != nil && id.IP != nil:
		return id.GetHostname() + " (" + id.GetIP() + ")"
	case id.Hostname != nil:
		return id.GetHostname()
	}
	return id.GetIP()
}

// machineJSON is a MachineID as Mesos quotes it in errors: its JSON.
func machineJSON(id mesos.MachineID) string {
	b, err := json.Marshal(id)
	if err != nil {
		return describeMachine(id)
	}
	return string(b)
}

// updateUnavailability sets or clears a machine's unavailability, as
// Master::updateUnavailability does: every agent on it has its offers and
// inverse offers rescinded and starts over (frameworks' answers and their
// inverse offer filters are forgotten). Caller holds m.mu.
func (m *master) updateUnavailability(key string, u *mesos.Unavailability) {
	m.setUnavailability(m.machines[key], u)
	for _, a := range m.agentsOn(key) {
		for _, o := range a.offered {
			m.rescindOffer(o)
		}
		for _, io := range a.inverseOffers {
			m.removeInverseOffer(io, true)
		}
		a.inverseStatuses = map[string]mesosallocator.InverseOfferStatus{}
		for _, fw := range m.frameworks {
			delete(fw.inverseRefusals, a.id)
		}
	}
	m.triggerAllocation()
}

// updateSchedule replaces the maintenance schedule
// (Master::Http::___updateMaintenanceSchedule). Every machine the master
// knows is touched, so every outstanding offer is rescinded, as on a real
// master. Caller holds m.mu.
func (m *master) updateSchedule(s maintenance.Schedule) *httpError {
	if msg := m.validateSchedule(s); msg != "" {
		return &httpError{http.StatusBadRequest, msg}
	}
	windows := map[string]mesos.Unavailability{}
	for _, w := range s.Windows {
		for _, id := range w.MachineIDs {
			windows[machineKey(id)] = w.Unavailability
		}
	}
	for _, key := range m.sortedMachineKeys() {
		mc := m.machines[key]
		if u, ok := windows[key]; ok {
			if mc.mode != mesos.UP {
				m.updateUnavailability(key, &u)
			}
			continue
		}
		mc.mode = mesos.UP
		m.updateUnavailability(key, nil)
	}
	for _, w := range s.Windows {
		for _, id := range w.MachineIDs {
			key := machineKey(id)
			if mc := m.machines[key]; mc != nil && mc.mode != mesos.UP {
				continue
			}
			m.machines[key] = &machine{id: id, mode: mesos.DRAINING}
			u := w.Unavailability
			m.updateUnavailability(key, &u)
		}
	}
	m.schedule = s // the decoded call's own copy
	m.log().Info("maintenance schedule updated", "windows", len(s.Windows))
	return nil
}

// validateSchedule is maintenance::validation::schedule.
func (m *master) validateSchedule(s maintenance.Schedule) string {
	seen := map[string]bool{}
	for _, w := range s.Windows {
		if len(w.MachineIDs) == 0 {
			return "List of machines in the maintenance window is empty"
		}
		if w.Unavailability.Duration != nil && w.Unavailability.Duration.Nanoseconds < 0 {
			return "Unavailability 'duration' is negative"
		}
		for _, id := range w.MachineIDs {
			if msg := validateMachine(id); msg != "" {
				return msg
			}
			if seen[machineKey(id)] {
				return "Machine '" + machineJSON(id) + "' appears more than once in the schedule"
			}
			seen[machineKey(id)] = true
		}
	}
	for _, key := range m.sortedMachineKeys() {
		if mc := m.machines[key]; mc.mode == mesos.DOWN && !seen[key] {
			return "Machine '" + machineJSON(mc.id) + "' is deactivated and cannot be removed from the schedule"
		}
	}
	return ""
}

// validateMachine is maintenance::validation::machine.
func validateMachine(id mesos.MachineID) string {
	if id.GetHostname() == "" && id.GetIP() == "" {
		return "Both 'hostname' and 'ip' for a machine are empty"
	}
	if ip := id.GetIP(); ip != "" {
		if addr, err := netip.ParseAddr(ip); err != nil || !addr.Is4() {
			return "Failed to parse IPv4: " + ip
		}
	}
	return ""
}

// validateMachineList is maintenance::validation::machines.
func validateMachineList(ids []mesos.MachineID) string {
	if len(ids) == 0 {
		return "List of machines is empty"
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if msg := validateMachine(id); msg != "" {
			return msg
		}
		if seen[machineKey(id)] {
			return "Machine '" + machineJSON(id) + "' appears more than once in the schedule"
		}
		seen[machineKey(id)] = true
	}
	return ""
}

// checkMachinesIn refuses ids unless each is a machine of the schedule
// in mode, with the master's messages. Caller holds m.mu.
func (m *master) checkMachinesIn(ids []mesos.MachineID, mode mesos.MachineInfo_Mode, change string) *httpError {
	if msg := validateMachineList(ids); msg != "" {
		return &httpError{http.StatusBadRequest, msg}
	}
	for _, id := range ids {
		mc := m.machines[machineKey(id)]
		if mc == nil {
			return &httpError{http.StatusBadRequest, "Machine '" + machineJSON(id) + "' is not part of a maintenance schedule"}
		}
		if mc.mode != mode {
			return &httpError{http.StatusBadRequest, "Machine '" + machineJSON(id) + "' is not in " + mode.String() + " mode and cannot be " + change}
		}
	}
	return nil
}

// startMaintenance takes DRAINING machines DOWN: their agents are shut
// down and removed, their tasks gone by operator (_startMaintenance).
// Caller holds m.mu.
func (m *master) startMaintenance(ids []mesos.MachineID) *httpError {
	if err := m.checkMachinesIn(ids, mesos.DRAINING, "brought down"); err != nil {
		return err
	}
	for _, id := range ids {
		key := machineKey(id)
		for _, a := range m.agentsOn(key) {
			m.removeAgent(a, "Operator initiated 'Machine DOWN'", false)
		}
		m.machines[key].mode = mesos.DOWN
	}
	return nil
}

// stopMaintenance brings DOWN machines back UP and takes them out of the
// schedule (_stopMaintenance). Caller holds m.mu.
func (m *master) stopMaintenance(ids []mesos.MachineID) *httpError {
	if err := m.checkMachinesIn(ids, mesos.DOWN, "brought up"); err != nil {
		return err
	}
	up := map[string]bool{}
	for _, id := range ids {
		mc := m.machines[machineKey(id)]
		mc.mode = mesos.UP
		m.setUnavailability(mc, nil)
		up[machineKey(id)] = true
	}
	var windows []maintenance.Window
	for _, w := range m.schedule.Windows {
		var kept []mesos.MachineID
		for _, id := range w.MachineIDs {
			if !up[machineKey(id)] {
				kept = append(kept, id)
			}
		}
		if len(kept) > 0 {
			w.MachineIDs = kept
			windows = append(windows, w)
		}
	}
	m.schedule.Windows = windows
	return nil
}

// maintenanceStatus lists DRAINING machines with the frameworks' answers
// to inverse offers for their agents, and DOWN machines
// (_getMaintenanceStatus). Caller holds m.mu.
func (m *master) maintenanceStatus() maintenance.ClusterStatus {
	var status maintenance.ClusterStatus
	for _, key := range m.sortedMachineKeys() {
		mc := m.machines[key]
		switch mc.mode {
		case mesos.DRAINING:
			dm := maintenance.ClusterStatus_DrainingMachine{ID: mc.id}
			for _, a := range m.agentsOn(key) {
				fwIDs := make([]string, 0, len(a.inverseStatuses))
				for id := range a.inverseStatuses {
					fwIDs = append(fwIDs, id)
				}
				sort.Strings(fwIDs)
				for _, id := range fwIDs {
					dm.Statuses = append(dm.Statuses, a.inverseStatuses[id])
				}
			}
			status.DrainingMachines = append(status.DrainingMachines, dm)
		case mesos.DOWN:
			status.DownMachines = append(status.DownMachines, mc.id)
		}
	}
	return status
}

// offerInverse sends inverse offers, as the hierarchical allocator's
// generateInverseOffers does: for every active agent whose machine has an
// unavailability, to every connected framework with resources offered or
// allocated there that has no inverse offer for it outstanding and has
// not filtered it. They carry no resources (the whole agent) and the
// unavailability. Caller holds m.mu.
func (m *master) offerInverse(connected []*framework, now time.Time) {
	if !m.anyUnavailability() {
		return // the common case, without a look at every agent
	}
	batches := map[*framework][]mesos.InverseOffer{}
	for _, a := range m.agentOrder {
		u := m.unavailabilityOf(a)
		if a.removed || a.deactivated || u == nil {
			continue
		}
		for _, fw := range connected {
			if a.inverseOffers[fw.id] != nil || !a.holdsResourcesOf(fw) {
				continue
			}
			if until, ok := fw.inverseRefusals[a.id]; ok {
				if now.Before(until) {
					continue
				}
				delete(fw.inverseRefusals, a.id)
			}
			io := &inverseOffer{id: m.newOfferID(), fw: fw, agent: a, unavailability: *u}
			m.inverseOffers[io.id] = io
			a.inverseOffers[fw.id] = io
			batches[fw] = append(batches[fw], mesos.InverseOffer{
				OfferID:        mesos.OfferID{Value: io.id},
				URL:            a.url(),
				FrameworkID:    mesos.FrameworkID{Value: fw.id},
				AgentID:        &mesos.AgentID{Value: a.id},
				Unavailability: io.unavailability,
			})
		}
	}
	for _, fw := range connected {
		if ios := batches[fw]; len(ios) > 0 {
			fw.stream.send(&scheduler.Event{Type: scheduler.Event_INVERSE_OFFERS, InverseOffers: &scheduler.Event_InverseOffers{InverseOffers: ios}})
		}
	}
}

// anyUnavailability reports whether a machine has a maintenance window.
// Caller holds m.mu.
func (m *master) anyUnavailability() bool { return m.unavailable > 0 }

// setUnavailability sets or clears a machine's maintenance window,
// counted in m.unavailable. Caller holds m.mu.
func (m *master) setUnavailability(mc *machine, u *mesos.Unavailability) {
	switch {
	case mc.unavailability == nil && u != nil:
		m.unavailable++
	case mc.unavailability != nil && u == nil:
		m.unavailable--
	}
	mc.unavailability = u
}

// holdsResourcesOf reports whether fw has resources offered or allocated
// on the agent: only such frameworks get inverse offers.
func (a *agent) holdsResourcesOf(fw *framework) bool {
	for _, o := range a.offered {
		if o.fw == fw {
			return true
		}
	}
	for _, t := range a.tasks {
		if t.fw == fw {
			return true
		}
	}
	for _, ex := range a.executors {
		if ex.fw == fw {
			return true
		}
	}
	return false
}

// removeInverseOffer forgets an inverse offer, telling its framework when
// rescind is set. Caller holds m.mu.
func (m *master) removeInverseOffer(io *inverseOffer, rescind bool) {
	delete(m.inverseOffers, io.id)
	if io.agent.inverseOffers[io.fw.id] == io {
		delete(io.agent.inverseOffers, io.fw.id)
	}
	if rescind && io.fw.stream != nil {
		io.fw.stream.send(&scheduler.Event{Type: scheduler.Event_RESCIND_INVERSE_OFFER,
			RescindInverseOffer: &scheduler.Event_RescindInverseOffer{InverseOfferID: mesos.OfferID{Value: io.id}}})
	}
}

// answerInverseOffers handles ACCEPT_INVERSE_OFFERS and
// DECLINE_INVERSE_OFFERS: each of the framework's outstanding inverse
// offers named gets the answer, which GET_MAINTENANCE_STATUS shows, and a
// filter: no new inverse offer for that agent for filters.refuse_seconds
// (default 5s, at most a year). Unknown IDs are ignored, as the master
// only logs them. Caller holds m.mu.
func (m *master) answerInverseOffers(fw *framework, ids []mesos.OfferID, filters *mesos.Filters, answer mesosallocator.InverseOfferStatus_Status) {
	if len(ids) == 0 {
		m.log().Warn("inverse offer answer without inverse offers", "framework", fw.id, "answer", answer.String())
		return
	}
	now := m.cfg.Clock.Now()
	refuse := m.cfg.DefaultRefuse.D()
	if s := filters.GetRefuseSeconds(); filters != nil && filters.RefuseSeconds != nil && s >= 0 {
		refuse = min(time.Duration(s*float64(time.Second)), 365*24*time.Hour)
	}
	for _, id := range ids {
		io := m.inverseOffers[id.Value]
		if io == nil || io.fw != fw {
			m.log().Warn("ignoring the answer to an inverse offer that is no longer valid", "framework", fw.id, "inverse_offer", id.Value)
			continue
		}
		m.removeInverseOffer(io, false)
		io.agent.inverseStatuses[fw.id] = mesosallocator.InverseOfferStatus{
			Status:      answer.Enum(),
			FrameworkID: mesos.FrameworkID{Value: fw.id},
			Timestamp:   mesos.TimeInfo{Nanoseconds: now.UnixNano()},
		}
		if refuse > 0 {
			if fw.inverseRefusals == nil {
				fw.inverseRefusals = map[string]time.Time{}
			}
			fw.inverseRefusals[io.agent.id] = now.Add(refuse)
			m.alloc.triggerAfter(refuse)
		}
	}
}
