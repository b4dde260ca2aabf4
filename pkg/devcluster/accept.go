package devcluster

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Minimum executor resources for LAUNCH_GROUP (Mesos MIN_CPUS, MIN_MEM).
const (
	minExecutorCPUs  = 0.01
	minExecutorMemMB = 32
)

// accept handles ACCEPT (src/master/master.cpp "accept" and "_accept").
// Errors never fail the call: they come back as status updates. Caller
// holds m.mu.
func (m *master) accept(fw *framework, acc *scheduler.Call_Accept) {
	offers, agent, offerErr := m.validateOffers(fw, acc.OfferIDs)
	if offerErr != "" {
		m.refuseInvalidOffers(fw, acc, offerErr)
		return
	}

	// Like the master, allocate the operations' resources to the role of a
	// framework that is not MULTI_ROLE (it may name them without
	// allocation_info), then compare with what was offered to that role.
	if !fw.multiRole {
		injectAllocationInfo(acc.Operations, fw.role)
	}
	var offered mesos.Resources
	for _, o := range offers {
		m.useOffer(o)
		addResources(&offered, o.resources...)
	}
	remaining := offered.Allocate(fw.role)

	for _, op := range acc.Operations {
		switch op.Type {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch != nil {
				m.launchTasks(fw, agent, op, &remaining)
			}
		case mesos.Offer_Operation_LAUNCH_GROUP:
			if op.LaunchGroup != nil {
				m.launchGroup(fw, agent, op, &remaining)
			}
		default:
			m.log().Warn("operation not supported by the dev cluster; ignored", "framework", fw.id, "operation", op.Type.String())
		}
	}

	// Unused resources go back with the ACCEPT's filter (default 5s),
	// installed first: they must not go to fw in between.
	if len(remaining) > 0 {
		unused := sumResources(remaining)
		m.refuse(fw, agent, unused, acc.Filters)
		agent.share.recover(unused)
	}
	m.alloc.triggerFreed()
}

// refuseInvalidOffers answers an ACCEPT of offers that validateOffers
// refused (why: offerErr): fw's offers among them are gone, and every
// task of its operations is lost (dropped, for a partition-aware
// framework).
func (m *master) refuseInvalidOffers(fw *framework, acc *scheduler.Call_Accept, offerErr string) {
	for _, oid := range acc.OfferIDs {
		if o := m.offers[oid.Value]; o != nil && o.fw == fw {
			m.removeOffer(o)
		}
	}
	state := mesos.TASK_LOST
	if fw.partitionAware {
		state = mesos.TASK_DROPPED
	}
	for _, op := range acc.Operations {
		for _, ti := range operationTasks(op) {
			agentID := ti.AgentID
			m.sendUpdate(fw, m.masterStatus(ti.TaskID, &agentID, state, mesos.REASON_INVALID_OFFERS, "Task launched with invalid offers: "+offerErr))
		}
	}
	m.log().Warn("ACCEPT with invalid offers", "framework", fw.id, "err", offerErr)
}

// launchTasks runs each valid task of a LAUNCH operation on a, taking
// what it uses (and its executor's, when not yet running) from remaining;
// an invalid one fails alone.
func (m *master) launchTasks(fw *framework, a *agent, op mesos.Offer_Operation, remaining *mesos.Resources) {
	for _, ti := range op.Launch.TaskInfos {
		if op.ID != nil {
			m.taskError(fw, ti, mesos.REASON_TASK_INVALID, "The `id` field cannot be set on LAUNCH operations")
			continue
		}
		if msg := m.validateLaunchTask(fw, a, &ti, *remaining); msg != "" {
			m.taskError(fw, ti, mesos.REASON_TASK_INVALID, msg)
			continue
		}
		used := m.asSeen(fw, ti.Resources)
		if ti.Executor != nil && a.executors[executorKey(fw.id, ti.Executor.ExecutorID.Value)] == nil {
			addResources(&used, m.asSeen(fw, ti.Executor.Resources)...)
		}
		remaining.Subtract(used...)
		a.launch(fw, ti.Executor, []mesos.TaskInfo{ti}, false)
	}
}

// launchGroup runs a LAUNCH_GROUP operation's task group on a, all
// or none, taking what it uses (and its executor's, when not yet
// running) from remaining.
func (m *master) launchGroup(fw *framework, a *agent, op mesos.Offer_Operation, remaining *mesos.Resources) {
	ex := op.LaunchGroup.Executor
	tasks := make([]mesos.TaskInfo, len(op.LaunchGroup.TaskGroup.Tasks))
	for i, ti := range op.LaunchGroup.TaskGroup.Tasks {
		if ti.Executor == nil {
			e := ex
			ti.Executor = &e
		}
		tasks[i] = ti
	}
	if op.ID != nil {
		m.groupError(fw, tasks, "The `id` field cannot be set on LAUNCH_GROUP operations")
		return
	}
	if msg := m.validateTaskGroup(fw, a, &ex, tasks, *remaining); msg != "" {
		m.groupError(fw, tasks, msg)
		return
	}
	var used mesos.Resources
	for _, ti := range tasks {
		addResources(&used, m.asSeen(fw, ti.Resources)...)
	}
	if a.executors[executorKey(fw.id, ex.ExecutorID.Value)] == nil {
		addResources(&used, m.asSeen(fw, ex.Resources)...)
	}
	remaining.Subtract(used...)
	a.launch(fw, &ex, tasks, true)
}

// asSeen returns the resources an operation uses, allocated to the
// framework's role like what was offered.
func (m *master) asSeen(_ *framework, rs []mesos.Resource) mesos.Resources {
	return cloneResources(rs)
}

// injectAllocationInfo allocates the resources of launch operations (tasks
// and executors) to role, as the master does for frameworks that are not
// MULTI_ROLE (master.cpp, accept); executors then see allocation_info on
// every resource, as in the recording of a real agent.
func injectAllocationInfo(ops []mesos.Offer_Operation, role string) {
	alloc := func(rs *[]mesos.Resource) {
		if len(*rs) > 0 {
			*rs = cloneResources(*rs).Unallocate().Allocate(role)
		}
	}
	for i := range ops {
		switch op := &ops[i]; {
		case op.Launch != nil:
			for j := range op.Launch.TaskInfos {
				ti := &op.Launch.TaskInfos[j]
				alloc(&ti.Resources)
				if ti.Executor != nil {
					alloc(&ti.Executor.Resources)
				}
			}
		case op.LaunchGroup != nil:
			alloc(&op.LaunchGroup.Executor.Resources)
			for j := range op.LaunchGroup.TaskGroup.Tasks {
				ti := &op.LaunchGroup.TaskGroup.Tasks[j]
				alloc(&ti.Resources)
				if ti.Executor != nil {
					alloc(&ti.Executor.Resources)
				}
			}
		}
	}
}

func operationTasks(op mesos.Offer_Operation) []mesos.TaskInfo {
	switch {
	case op.Type == mesos.Offer_Operation_LAUNCH && op.Launch != nil:
		return op.Launch.TaskInfos
	case op.Type == mesos.Offer_Operation_LAUNCH_GROUP && op.LaunchGroup != nil:
		return op.LaunchGroup.TaskGroup.Tasks
	}
	return nil
}

// validateOffers checks the offer IDs of an ACCEPT (validation::offer).
func (m *master) validateOffers(fw *framework, ids []mesos.OfferID) ([]*offer, *agent, string) {
	if len(ids) == 0 {
		return nil, nil, "No offers specified"
	}
	seen := map[string]bool{}
	var out []*offer
	var a *agent
	for _, id := range ids {
		if seen[id.Value] {
			return nil, nil, "Duplicate offer " + id.Value + " in offer list"
		}
		seen[id.Value] = true
		o := m.offers[id.Value]
		if o == nil {
			return nil, nil, "Offer " + id.Value + " is no longer valid"
		}
		if o.fw != fw {
			return nil, nil, "Offer " + id.Value + " has invalid framework " + o.fw.id + " while framework " + fw.id + " is expected"
		}
		if a != nil && o.agent != a {
			return nil, nil, "Aggregated offers must belong to one single agent. Offer " + id.Value + " uses agent " + o.agent.id + " and agent " + a.id
		}
		a = o.agent
		out = append(out, o)
	}
	return out, a, ""
}

func (m *master) taskError(fw *framework, ti mesos.TaskInfo, reason mesos.TaskStatus_Reason, msg string) {
	agentID := ti.AgentID
	m.sendUpdate(fw, m.masterStatus(ti.TaskID, &agentID, mesos.TASK_ERROR, reason, msg))
	m.log().Info("TASK_ERROR", "framework", fw.id, "task", ti.TaskID.Value, "reason", reason.String(), "message", msg)
}

func (m *master) groupError(fw *framework, tasks []mesos.TaskInfo, msg string) {
	for _, ti := range tasks {
		m.taskError(fw, ti, mesos.REASON_TASK_GROUP_INVALID, msg)
	}
}

// validateID is Mesos' common ID rule.
func validateID(id string) string {
	switch {
	case id == "":
		return "ID must not be empty"
	case len(id) > 255:
		return "ID must not be greater than 255 characters"
	case id == "." || id == "..":
		return "'" + id + "' is disallowed"
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return "'" + id + "' contains invalid characters"
		}
	}
	return ""
}

// validateTaskCommon is validation::task::internal::validateTask, plus a
// check Mesos lacks (it aborts instead): duplicate IDs inside one ACCEPT
// are caught by the launch itself adding the first task to fw.tasks.
func (m *master) validateTaskCommon(fw *framework, a *agent, ti *mesos.TaskInfo) string {
	if msg := validateID(ti.TaskID.Value); msg != "" {
		return "Task has an invalid TaskID: " + msg
	}
	if fw.tasks[ti.TaskID.Value] != nil {
		return "Task has duplicate ID: " + ti.TaskID.Value
	}
	if fw.unreachable[ti.TaskID.Value] != nil {
		return "Task reuses the ID of an unreachable task: " + ti.TaskID.Value
	}
	if ti.AgentID.Value != a.id {
		return "Task uses invalid agent " + ti.AgentID.Value + " while agent " + a.id + " is expected"
	}
	if ti.KillPolicy != nil && ti.KillPolicy.GracePeriod != nil && ti.KillPolicy.GracePeriod.Nanoseconds < 0 {
		return "Task's 'kill_policy.grace_period' must be non-negative"
	}
	if len(ti.Resources) == 0 {
		return "Task uses no resources"
	}
	if err := resources.Validate(ti.Resources...); err != nil {
		return "Task uses invalid resources: " + err.Error()
	}
	if msg := allocatedToRole(ti.Resources, fw.role); msg != "" {
		return "Invalid task resources: " + msg
	}
	return ""
}

func allocatedToRole(rs []mesos.Resource, role string) string {
	for _, r := range rs {
		if r.AllocationInfo == nil || r.AllocationInfo.Role == nil {
			return "The resources are not allocated to a role"
		}
		if *r.AllocationInfo.Role != role {
			return "The resources have multiple allocation roles ('" + *r.AllocationInfo.Role + "' and '" + role + "') but only one allocation role is allowed"
		}
	}
	return ""
}

// validateExecutorCommon is validation::executor::internal::validate.
func (m *master) validateExecutorCommon(fw *framework, a *agent, ex *mesos.ExecutorInfo) string {
	switch ex.Type {
	case mesos.ExecutorInfo_DEFAULT:
		if ex.Command != nil {
			return "'ExecutorInfo.command' must not be set for 'DEFAULT' executor"
		}
	case mesos.ExecutorInfo_CUSTOM:
		if ex.Command == nil {
			return "'ExecutorInfo.command' must be set for 'CUSTOM' executor"
		}
	}
	if msg := validateID(ex.ExecutorID.Value); msg != "" {
		return msg
	}
	if ex.ShutdownGracePeriod != nil && ex.ShutdownGracePeriod.Nanoseconds < 0 {
		return "ExecutorInfo's 'shutdown_grace_period' must be non-negative"
	}
	if ex.FrameworkID == nil {
		return "'ExecutorInfo.framework_id' must be set"
	}
	if ex.FrameworkID.Value != fw.id {
		return "ExecutorInfo has an invalid FrameworkID (Actual: " + ex.FrameworkID.Value + " vs Expected: " + fw.id + ")"
	}
	if err := resources.Validate(ex.Resources...); err != nil {
		return "Executor uses invalid resources: " + err.Error()
	}
	if len(ex.Resources) > 0 {
		if msg := allocatedToRole(ex.Resources, fw.role); msg != "" {
			return "Invalid executor resources: " + msg
		}
	}
	if existing := a.executors[executorKey(fw.id, ex.ExecutorID.Value)]; existing != nil && !existing.info.Equal(ex) {
		return "ExecutorInfo is not compatible with existing ExecutorInfo with same ExecutorID"
	}
	return ""
}

// validateLaunchTask validates one task of a LAUNCH operation.
func (m *master) validateLaunchTask(fw *framework, a *agent, ti *mesos.TaskInfo, offered mesos.Resources) string {
	if ti.Executor != nil && ti.Executor.FrameworkID == nil {
		ti.Executor.FrameworkID = &mesos.FrameworkID{Value: fw.id}
	}
	if msg := m.validateTaskCommon(fw, a, ti); msg != "" {
		return msg
	}
	if (ti.Executor != nil) == (ti.Command != nil) {
		return "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"
	}
	total := m.asSeen(fw, ti.Resources)
	if ex := ti.Executor; ex != nil {
		if msg := m.validateExecutorCommon(fw, a, ex); msg != "" {
			return msg
		}
		if ex.Type != mesos.ExecutorInfo_UNKNOWN && ex.Type != mesos.ExecutorInfo_CUSTOM {
			return "'ExecutorInfo.type' must be 'CUSTOM'"
		}
		if ex.Command == nil {
			return "'ExecutorInfo.command' must be set"
		}
		if a.executors[executorKey(fw.id, ex.ExecutorID.Value)] == nil {
			addResources(&total, m.asSeen(fw, ex.Resources)...)
		}
	}
	if !containsAll(offered, total) {
		return "Task uses more resources " + formatResources(total) + " than available " + formatResources(offered)
	}
	return ""
}

// validateTaskGroup is validation::task::group::validate.
func (m *master) validateTaskGroup(fw *framework, a *agent, ex *mesos.ExecutorInfo, tasks []mesos.TaskInfo, offered mesos.Resources) string {
	seen := map[string]bool{}
	for i := range tasks {
		ti := &tasks[i]
		msg := m.validateTaskCommon(fw, a, ti)
		if msg == "" && seen[ti.TaskID.Value] {
			msg = "Task has duplicate ID: " + ti.TaskID.Value
		}
		if msg == "" && ti.Executor == nil {
			msg = "'TaskInfo.executor' must be set"
		}
		if msg == "" && ti.Container != nil && ti.Container.Type != nil && *ti.Container.Type == mesos.ContainerInfo_DOCKER {
			msg = "Docker ContainerInfo is not supported on the task"
		}
		if msg != "" {
			return "Task '" + ti.TaskID.Value + "' is invalid: " + msg
		}
		seen[ti.TaskID.Value] = true
	}
	if msg := m.validateExecutorCommon(fw, a, ex); msg != "" {
		return msg
	}
	if ex.Type == mesos.ExecutorInfo_UNKNOWN {
		return "'ExecutorInfo.type' must be set"
	}
	if ex.Container != nil && ex.Container.Type != nil && *ex.Container.Type == mesos.ContainerInfo_DOCKER {
		return "Docker ContainerInfo is not supported on the executor"
	}
	for _, ti := range tasks {
		if !ti.Executor.Equal(ex) {
			return "The `ExecutorInfo` of task '" + ti.TaskID.Value + "' is different from executor '" + ex.ExecutorID.Value + "'"
		}
	}
	rs := mesos.Resources(ex.Resources)
	if cpus, ok := resources.CPUs(rs...); !ok || cpus < minExecutorCPUs {
		got := "None"
		if ok {
			got = formatDouble(cpus)
		}
		return "Executor '" + ex.ExecutorID.Value + "' uses less CPUs (" + got + ") than the minimum required (" + formatDouble(minExecutorCPUs) + ")"
	}
	if mem, ok := scalarSum(rs, "mem"); !ok || mem < minExecutorMemMB {
		got := "None"
		if ok {
			got = formatMegabytes(mem)
		}
		return "Executor '" + ex.ExecutorID.Value + "' uses less memory (" + got + ") than the minimum required (" + formatMegabytes(minExecutorMemMB) + ")"
	}
	if _, ok := scalarSum(rs, "disk"); !ok {
		return "Executor '" + ex.ExecutorID.Value + "' uses no disk"
	}
	var total mesos.Resources
	for _, ti := range tasks {
		addResources(&total, m.asSeen(fw, ti.Resources)...)
	}
	if a.executors[executorKey(fw.id, ex.ExecutorID.Value)] == nil {
		addResources(&total, m.asSeen(fw, ex.Resources)...)
	}
	if !containsAll(offered, total) {
		return "Total resources " + formatResources(total) + " required by task group and its executor are more than available " + formatResources(offered)
	}
	return ""
}

func scalarSum(rs mesos.Resources, name string) (float64, bool) {
	found := false
	sum := 0.0
	for _, r := range rs {
		if r.Name == name && r.Scalar != nil {
			found = true
			sum += r.Scalar.Value
		}
	}
	return sum, found
}
