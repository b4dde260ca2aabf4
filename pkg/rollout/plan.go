package rollout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cause says why a revision was made; a rollback's rollout ends
// RolledBack instead of Completed.
type Cause string

// The causes of a new revision.
const (
	CauseUpdate   Cause = "update"   // a new spec (POST, PUT)
	CauseRestart  Cause = "restart"  // the same spec, restarted (POST …/restart)
	CauseRollback Cause = "rollback" // an earlier revision's spec (POST …/rollback)
)

// State is what a rollout remembers between inputs; the scheduler core
// persists it.
type State struct {
	// StableVersion is the revision the fleet ran before this update
	// (currentRevision); 0 until a first rollout completed.
	StableVersion uint64 `json:"stableVersion"`
	// UpdateVersion is the revision being rolled out (updateRevision).
	UpdateVersion uint64 `json:"updateVersion"`
	Cause         Cause  `json:"cause,omitempty"`
	// RolledBackTo is the revision whose spec a rollback brought back.
	RolledBackTo uint64 `json:"rolledBackTo,omitempty"`
	// Step is the current canary step; len(steps) once past them.
	Step      int       `json:"step"`
	StepSince time.Time `json:"stepSince"`
	// Began is when the rollout began: Strategy.AllocatedTimeout counts
	// from it.
	Began time.Time `json:"began,omitzero"`
	// Wait is what the rollout waits for, if anything.
	Wait *Wait `json:"wait,omitempty"`
	// InBatch is set while a batch runs (upgradeDuration, rollingManually).
	InBatch   bool      `json:"inBatch,omitempty"`
	BatchDone time.Time `json:"batchDone,omitempty"`
	// Batches counts the batches of this rollout that finished.
	Batches     int    `json:"batches,omitempty"`
	Aborted     bool   `json:"aborted,omitempty"`
	AbortReason string `json:"abortReason,omitempty"`
	// Seq numbers the waits, so that a promote ends the wait it was
	// asked for and no later one.
	Seq int `json:"seq"`
}

// Abort aborts the rollout for reason: every instance targets the stable
// revision and nothing is waited for.
func (s *State) Abort(reason string) {
	s.Aborted, s.AbortReason = true, reason
	s.Wait, s.InBatch = nil, false
}

// Begin returns the state of a new rollout to version, from s.
func (s State) Begin(version uint64, cause Cause, rolledBackTo uint64, now time.Time) State {
	return State{StableVersion: s.StableVersion, UpdateVersion: version, Cause: cause, RolledBackTo: rolledBackTo,
		StepSince: now, Began: now, Seq: s.Seq}
}

// WaitKind is what a rollout waits for.
type WaitKind string

// The waits.
const (
	WaitPause        WaitKind = "pause"        // a canary pause step
	WaitHook         WaitKind = "hook"         // a canary hook step's verdict
	WaitInconclusive WaitKind = "inconclusive" // a hook was inconclusive: promote goes on
	WaitBatch        WaitKind = "batch"        // rollingManually: promote starts the next batch
)

// Wait is one wait of a rollout.
type Wait struct {
	Kind WaitKind `json:"kind"`
	Seq  int      `json:"seq"`
	// Step is the canary step waiting; -1 for a batch wait.
	Step  int       `json:"step"`
	Since time.Time `json:"since"`
	// Until ends a timed pause; zero waits for promote.
	Until   time.Time `json:"until,omitzero"`
	Message string    `json:"message,omitempty"`
}

// Promotable reports whether promote ends the wait.
func (w *Wait) Promotable() bool { return w != nil && w.Kind != WaitHook }

// Rev is the revision an instance targets.
type Rev int

// The revisions of a rollout.
const (
	RevUpdate Rev = iota
	RevStable
)

// Instance is what Plan needs of one instance.
type Instance struct {
	// Index is its place in the count of replicas: its ID, or its rank
	// where the IDs have holes. ID is its own, which the status names.
	Index, ID int
	// AtUpdate and AtStable: its template is the update revision's, the
	// stable revision's (both when those are the same).
	AtUpdate, AtStable bool
	// Ready: running, healthy by its checks, not being updated.
	Ready bool
	// Updating: an update of it is under way (replacement, in place, hot
	// patch).
	Updating bool
	// UpdateError says why its update cannot go on (the executor refused
	// it, its launch cannot take it); "" when nothing stops it.
	UpdateError string
	// Held: it is allocated (a game session runs on it). It is not moved
	// until released, or until Strategy.AllocatedTimeout after the
	// rollout began.
	Held bool
}

// HookPhase is the outcome of a hook run (seed 003).
type HookPhase string

// The verdicts that end a hook step's wait.
const (
	HookSuccessful   HookPhase = "Successful"
	HookFailed       HookPhase = "Failed"
	HookError        HookPhase = "Error"
	HookInconclusive HookPhase = "Inconclusive"
)

// HookVerdict is the outcome of the hook run of the wait Seq.
type HookVerdict struct {
	Seq     int
	Phase   HookPhase
	Message string
}

// Input is everything Plan looks at.
type Input struct {
	Now      time.Time
	Strategy Strategy
	Replicas int
	State    State
	// Paused holds the rollout: no new moves, no new steps.
	Paused bool
	// Promote ends the wait with this Seq (0: none).
	Promote int
	Hook    *HookVerdict
	// Instances are the live instances, surge ones (Index ≥ Replicas)
	// included, those being removed not.
	Instances []Instance
}

// Move sends one instance to a revision.
type Move struct {
	Index int
	To    Rev
}

// Result is what Plan decides.
type Result struct {
	State State
	// Moves are the instances to send to their target now, in order.
	Moves []Move
	// Surge is how many surge instances (IDs Replicas…Replicas+Surge-1)
	// to keep.
	Surge int
	// Completed: every instance runs the update revision and is ready;
	// State.StableVersion became UpdateVersion.
	Completed bool
	Status    Status
	replicas  int
	partition int
}

// Target is the revision instance index should run after the plan: what
// a new instance (scale-up, surge) or a relaunch launches.
func (r *Result) Target(index int) Rev { return target(&r.State, r.replicas, r.partition, index) }

// target is the revision instance index runs in a rollout at st, of
// replicas instances with those from partition up updated.
func target(st *State, replicas, partition, index int) Rev {
	switch {
	case st.StableVersion == 0 || st.StableVersion == st.UpdateVersion:
		return RevUpdate
	case st.Aborted:
		return RevStable
	case index >= replicas || index >= partition:
		return RevUpdate
	}
	return RevStable
}

// Plan decides the next moves of a rollout.
func Plan(in Input) Result {
	p := &planner{in: in, st: in.State}
	p.maxUnavailable, p.maxSurge = in.Strategy.Budget(in.Replicas)
	p.wanted = make([]*Instance, in.Replicas)
	for i := range in.Instances {
		inst := &in.Instances[i]
		if inst.Index < in.Replicas {
			p.wanted[inst.Index] = inst
		}
		if inst.Ready && !inst.Updating {
			p.serving++
		}
	}
	return p.run()
}

type planner struct {
	in                       Input
	st                       State
	maxUnavailable, maxSurge int
	// wanted are the instances with IDs below Replicas, by ID (nil:
	// missing); serving counts the instances ready and not updated.
	wanted  []*Instance
	serving int
	// counts is the tally of the wanted instances for the targets of
	// countsFor (the targets change with the step and an abort).
	counts    tally
	countsFor *[3]int
}

// tally counts the wanted instances against their targets.
type tally struct {
	unsettled int // not on their target and ready
	remaining int // not on their target yet
	inFlight  int // on their way to their target
}

// tally returns the counts for the current targets, counting once per
// targets.
func (p *planner) tally() tally {
	aborted := 0
	if p.st.Aborted {
		aborted = 1
	}
	key := [3]int{p.partition(), aborted, int(p.st.StableVersion)}
	if p.countsFor != nil && *p.countsFor == key {
		return p.counts
	}
	var t tally
	for _, inst := range p.wanted {
		at := inst != nil && p.atTarget(*inst)
		if inst == nil || !at || inst.Updating || !inst.Ready {
			t.unsettled++
		}
		if inst == nil || !at || inst.Updating {
			t.remaining++
		}
		if inst != nil && (inst.Updating || at && !inst.Ready) {
			t.inFlight++
		}
	}
	p.counts, p.countsFor = t, &key
	return t
}

func (p *planner) run() Result {
	res := Result{}
	if p.st.Began.IsZero() && p.in.Strategy.AllocatedTimeout > 0 && slices.ContainsFunc(p.in.Instances, func(x Instance) bool { return x.Held }) {
		p.st.Began = p.in.Now // a rollout recorded before it had a start: its deadline counts from now
	}
	p.endWait()
	if !p.in.Paused {
		p.walkSteps()
	}
	gated := p.in.Strategy.UpgradeDuration > 0 || p.in.Strategy.Manual
	if gated {
		p.finishBatch()
	}
	if !p.in.Paused && p.st.Wait == nil && (!gated || p.batchMayStart()) {
		res.Moves = p.moves()
		if gated && len(res.Moves) > 0 {
			p.st.InBatch = true
		}
	}
	res.Surge = p.surge()
	if p.completed() && !p.st.Aborted && p.st.StableVersion != p.st.UpdateVersion {
		p.st.StableVersion = p.st.UpdateVersion
		p.st.Step, p.st.Wait, p.st.InBatch = len(p.in.Strategy.Steps), nil, false
		res.Completed = true
	}
	res.State = p.st
	res.Status = p.status(res.Moves)
	res.replicas, res.partition = p.in.Replicas, p.partition()
	return res
}

// canary reports whether the canary steps apply: a rollout from a stable
// revision, not aborted (a first deployment has nothing to compare with)
// and not a rollback (a known spec going back, in a hurry, under the same
// budget).
func (p *planner) canary() bool {
	return len(p.in.Strategy.Steps) > 0 && p.st.StableVersion != 0 &&
		p.st.StableVersion != p.st.UpdateVersion && !p.st.Aborted && p.st.Cause != CauseRollback
}

// partition is the effective partition: the latest partition step's
// while the steps run (none updated before the first), else the
// strategy's.
func (p *planner) partition() int {
	if !p.canary() || p.st.Step >= len(p.in.Strategy.Steps) {
		return p.in.Strategy.Partition
	}
	part := p.in.Replicas
	for _, s := range p.in.Strategy.Steps[:p.st.Step+1] {
		if s.Kind == StepPartition {
			part = s.Partition
		}
	}
	return part
}

// target is the revision instance index should run.
func (p *planner) target(index int) Rev {
	return target(&p.st, p.in.Replicas, p.partition(), index)
}

func (p *planner) atTarget(inst Instance) bool {
	if p.target(inst.Index) == RevUpdate {
		return inst.AtUpdate
	}
	return inst.AtStable
}

// settled reports whether every wanted instance exists, runs its target
// and is ready.
func (p *planner) settled() bool { return p.unsettled() == 0 }

// remaining counts the wanted instances not on their target yet.
func (p *planner) remaining() int { return p.tally().remaining }

// unsettled counts the wanted instances not yet on their target and
// ready.
func (p *planner) unsettled() int { return p.tally().unsettled }

// endWait ends the current wait when its promote, duration or hook
// verdict came.
func (p *planner) endWait() {
	w := p.st.Wait
	if w == nil {
		return
	}
	switch {
	case w.Promotable() && p.in.Promote == w.Seq:
	case !w.Until.IsZero() && !p.in.Now.Before(w.Until):
	case w.Kind == WaitHook && p.in.Hook != nil && p.in.Hook.Seq == w.Seq:
		switch v := p.in.Hook; v.Phase {
		case HookSuccessful:
		case HookInconclusive:
			w.Kind, w.Message = WaitInconclusive, "hook inconclusive: "+v.Message+"; promote to go on, abort to go back"
			return
		default:
			p.st.Abort(fmt.Sprintf("hook %s of step %d %s: %s", p.in.Strategy.Steps[w.Step].Hook.TemplateName, w.Step+1, strings.ToLower(string(v.Phase)), v.Message))
			return
		}
	default:
		return
	}
	p.st.Wait = nil
	if w.Step >= 0 {
		p.st.Step, p.st.StepSince = w.Step+1, p.in.Now
	}
}

// walkSteps moves through the canary steps as far as they are done,
// starting the wait of a pause or hook step.
func (p *planner) walkSteps() {
	for p.canary() && p.st.Wait == nil && p.st.Step < len(p.in.Strategy.Steps) {
		step := p.in.Strategy.Steps[p.st.Step]
		switch step.Kind {
		case StepPartition:
			if !p.settled() {
				return
			}
			p.st.Step, p.st.StepSince = p.st.Step+1, p.in.Now
		case StepPause:
			w := p.newWait(WaitPause, p.st.Step)
			if step.Duration > 0 {
				w.Until = p.in.Now.Add(step.Duration)
			}
			return
		case StepHook:
			p.newWait(WaitHook, p.st.Step)
			return
		}
	}
}

func (p *planner) newWait(kind WaitKind, step int) *Wait {
	p.st.Seq++
	p.st.Wait = &Wait{Kind: kind, Seq: p.st.Seq, Step: step, Since: p.in.Now}
	return p.st.Wait
}

// finishBatch notices that the batch in flight is ready: rollingManually
// then waits for promote.
func (p *planner) finishBatch() {
	if !p.st.InBatch || p.inFlight() > 0 {
		return
	}
	p.st.InBatch, p.st.BatchDone = false, p.in.Now
	p.st.Batches++
	if p.in.Strategy.Manual && p.remaining() > 0 && p.st.Wait == nil {
		p.newWait(WaitBatch, -1)
	}
}

// inFlight counts the instances on their way to their target.
func (p *planner) inFlight() int { return p.tally().inFlight }

func (p *planner) batchMayStart() bool {
	if p.st.InBatch {
		return false
	}
	return p.st.BatchDone.IsZero() || !p.in.Now.Before(p.st.BatchDone.Add(p.in.Strategy.UpgradeDuration))
}

// moves picks the instances to send to their target: those not ready
// for free, then ready ones while the budget lasts, highest ID first.
func (p *planner) moves() []Move {
	var free, costly []Instance
	for i := p.in.Replicas - 1; i >= 0; i-- {
		inst := p.wanted[i]
		if inst == nil || inst.Updating || p.atTarget(*inst) || p.held(*inst) {
			continue
		}
		if inst.Ready {
			costly = append(costly, *inst)
		} else {
			free = append(free, *inst)
		}
	}
	budget := p.ready() - (p.in.Replicas - p.maxUnavailable)
	var out []Move
	for _, inst := range free {
		out = append(out, Move{Index: inst.Index, To: p.target(inst.Index)})
	}
	for _, inst := range costly {
		if budget <= 0 {
			break
		}
		budget--
		out = append(out, Move{Index: inst.Index, To: p.target(inst.Index)})
	}
	return out
}

// held reports whether inst waits for its release before it moves.
func (p *planner) held(inst Instance) bool {
	timeout := p.in.Strategy.AllocatedTimeout
	return inst.Held && (timeout == 0 || p.in.Now.Before(p.st.Began.Add(timeout)))
}

// allocated names the wanted instances off their target that are
// allocated: those held, and those the deadline let move anyway.
func (p *planner) allocated() (held, overdue []int) {
	for _, inst := range p.wanted {
		if inst == nil || !inst.Held || p.atTarget(*inst) {
			continue
		}
		if p.held(*inst) {
			held = append(held, inst.ID)
		} else {
			overdue = append(overdue, inst.ID)
		}
	}
	return held, overdue
}

// ready counts the instances that serve and are not being changed.
func (p *planner) ready() int { return p.serving }

// surge is how many surge instances to keep: up to maxSurge while
// instances of the step still have to move, none once they all run
// their target; an operator's pause keeps what there is.
func (p *planner) surge() int {
	existing := 0
	for _, inst := range p.in.Instances {
		if inst.Index >= p.in.Replicas {
			existing++
		}
	}
	switch {
	case p.in.Paused:
		return existing
	case p.maxSurge == 0 || p.st.StableVersion == 0 || p.st.StableVersion == p.st.UpdateVersion || p.settled():
		return 0 // a first deployment has nothing to keep serving
	}
	return min(p.maxSurge, p.unsettled())
}

// completed reports whether the rollout has nothing left: every wanted
// instance runs its target and is ready, no surge instance is left, no
// step or wait is pending and the partition is 0.
func (p *planner) completed() bool {
	if !p.settled() || p.st.Wait != nil || p.in.Paused {
		return false
	}
	for _, inst := range p.in.Instances {
		if inst.Index >= p.in.Replicas {
			return false
		}
	}
	if p.canary() && p.st.Step < len(p.in.Strategy.Steps) {
		return false
	}
	return p.st.Aborted || p.partition() == 0 || p.st.StableVersion == 0
}

// Phase is a rollout's phase (seed 004's status, Argo Rollouts' words).
type Phase string

// The phases.
const (
	PhaseProgressing Phase = "Progressing"
	PhasePaused      Phase = "Paused"
	PhaseCompleted   Phase = "Completed"
	PhaseAborted     Phase = "Aborted"
	PhaseRolledBack  Phase = "RolledBack"
)

// Condition is one observation about a rollout, Kubernetes style.
type Condition struct {
	Type    string `json:"type"`   // Available, Progressing, Paused
	Status  string `json:"status"` // True, False
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Status is a rollout's status, like seed 004's `kubectl get
// gamedeployment` columns plus what the rollout is doing.
type Status struct {
	Phase           Phase       `json:"phase"`
	Message         string      `json:"message"`
	Replicas        int         `json:"replicas"`
	Updated         int         `json:"updated"`
	UpdatedReady    int         `json:"updatedReady"`
	Ready           int         `json:"ready"`
	Total           int         `json:"total"`
	CurrentRevision uint64      `json:"currentRevision"`
	UpdateRevision  uint64      `json:"updateRevision"`
	CurrentStep     int         `json:"currentStepIndex"`
	Steps           int         `json:"steps"`
	Partition       int         `json:"partition"`
	Paused          bool        `json:"paused"`
	MaxUnavailable  int         `json:"maxUnavailable"`
	MaxSurge        int         `json:"maxSurge"`
	Conditions      []Condition `json:"conditions"`
}

// status says where the rollout stands after moves: the counts, the
// phase and its message, and the conditions.
func (p *planner) status(moves []Move) Status {
	st := p.statusCounts()
	progress := fmt.Sprintf("%d/%d updated, %d ready", st.Updated, st.Replicas, st.Ready)
	progressing, paused := p.phase(&st, moves, progress)
	if progressing.Reason == "" {
		progressing.Reason = "Paused"
	}
	if failed := p.updateErrors(); failed != "" {
		// Nothing will change until an operator does: said at once, not
		// left to a deadline.
		st.Message += "; " + failed
		if st.Phase == PhaseProgressing {
			progressing.Status, progressing.Reason = "False", "InstanceUpdateFailed"
		}
	}
	progressing.Message = st.Message
	st.Conditions = []Condition{p.availableCondition(), progressing}
	if paused != nil {
		st.Conditions = append(st.Conditions, *paused)
	}
	return st
}

// statusCounts is the status's numbers: revisions, steps, partition,
// budgets and how many instances are updated and ready.
func (p *planner) statusCounts() Status {
	st := Status{
		Replicas: p.in.Replicas, Total: len(p.in.Instances), CurrentRevision: p.st.StableVersion,
		UpdateRevision: p.st.UpdateVersion, CurrentStep: p.st.Step, Steps: len(p.in.Strategy.Steps),
		Partition: p.partition(), MaxUnavailable: p.maxUnavailable, MaxSurge: p.maxSurge,
	}
	if st.CurrentRevision == 0 {
		st.CurrentRevision = p.st.UpdateVersion // a first deployment: nothing else ran
	}
	if !p.canary() {
		st.CurrentStep = st.Steps
	}
	if p.st.Aborted {
		st.Partition = p.in.Replicas
	}
	for _, inst := range p.in.Instances {
		if inst.AtUpdate {
			st.Updated++
		}
		if inst.Ready {
			st.Ready++
		}
		if inst.AtUpdate && inst.Ready {
			st.UpdatedReady++
		}
	}
	return st
}

// availableCondition says whether enough instances are ready: all but
// maxUnavailable.
func (p *planner) availableCondition() Condition {
	available := Condition{Type: "Available", Status: "True", Reason: "MinimumReplicasAvailable",
		Message: fmt.Sprintf("%d ready, at least %d wanted", p.ready(), max(0, p.in.Replicas-p.maxUnavailable))}
	if p.ready() < p.in.Replicas-p.maxUnavailable {
		available.Status, available.Reason = "False", "MinimumReplicasUnavailable"
	}
	return available
}

// phase sets st's phase and message and returns the Progressing
// condition (its message not yet set) and the Paused one, nil unless
// paused.
func (p *planner) phase(st *Status, moves []Move, progress string) (progressing Condition, paused *Condition) {
	progressing = Condition{Type: "Progressing", Status: "True"}
	switch w := p.st.Wait; {
	case p.st.Aborted:
		st.Phase, progressing.Status, progressing.Reason = PhaseAborted, "False", "RolloutAborted"
		left := p.unsettled()
		if left == 0 {
			st.Message = fmt.Sprintf("aborted (%s): every instance back on revision %d", p.st.AbortReason, p.st.StableVersion)
		} else {
			st.Message = fmt.Sprintf("aborted (%s): returning to revision %d, %d/%d instances to go", p.st.AbortReason, p.st.StableVersion, left, p.in.Replicas)
		}
	case p.st.StableVersion == p.st.UpdateVersion && p.settled():
		st.Phase, progressing.Reason = PhaseCompleted, "RolloutCompleted"
		st.Message = fmt.Sprintf("every instance runs revision %d", p.st.UpdateVersion)
		if extra := st.Total - st.Replicas; extra > 0 {
			st.Message += fmt.Sprintf("; %d more going away", extra)
		}
		if p.st.Cause == CauseRollback {
			st.Phase, progressing.Reason = PhaseRolledBack, "RolledBack"
			st.Message = fmt.Sprintf("rolled back to the spec of revision %d (as revision %d): every instance runs it", p.st.RolledBackTo, p.st.UpdateVersion)
		}
	case p.in.Paused:
		st.Phase, st.Paused = PhasePaused, true
		paused = &Condition{Type: "Paused", Status: "True", Reason: "PausedByOperator", Message: "paused: resume to go on"}
		st.Message = "paused by the operator: " + progress
	case w != nil:
		st.Phase, st.Paused = PhasePaused, true
		paused = &Condition{Type: "Paused", Status: "True", Reason: waitReason(w), Message: p.waitMessage(w)}
		st.Message = paused.Message + ": " + progress
	case p.settled() && (!p.canary() || p.st.Step >= len(p.in.Strategy.Steps)) && p.partition() > 0:
		st.Phase, st.Paused = PhasePaused, true
		msg := fmt.Sprintf("partition %d reached: instances %d and up run revision %d; lower the partition to update the rest", p.partition(), p.partition(), p.st.UpdateVersion)
		paused = &Condition{Type: "Paused", Status: "True", Reason: "PartitionReached", Message: msg}
		st.Message = msg
	default:
		st.Phase = PhaseProgressing
		reason, note := p.progressReason(moves)
		held, overdue := p.allocated()
		if len(held) > 0 && reason == "WaitingForBudget" {
			reason = "AllocatedInstancesHeld" // the budget is not what it waits for
		}
		note += allocatedNote(held, overdue)
		progressing.Reason = reason
		st.Message = fmt.Sprintf("updating to revision %d: %s%s", p.st.UpdateVersion, progress, note)
		if p.canary() && p.st.Step < len(p.in.Strategy.Steps) {
			st.Message += fmt.Sprintf("; step %d/%d (partition %d)", p.st.Step+1, len(p.in.Strategy.Steps), p.partition())
		}
	}
	return progressing, paused
}

// progressReason says what a progressing rollout waits for; note says
// when the next batch may start when upgradeDuration holds it back.
func (p *planner) progressReason(moves []Move) (reason, note string) {
	switch {
	case len(moves) > 0:
		return "InstancesUpdating", ""
	case p.st.InBatch || p.inFlight() > 0:
		return "WaitingForReady", ""
	case p.in.Strategy.UpgradeDuration > 0 && !p.batchMayStart():
		next := p.st.BatchDone.Add(p.in.Strategy.UpgradeDuration).UTC().Format(time.RFC3339)
		return "UpgradeDuration", fmt.Sprintf("; next batch at %s (upgradeDuration)", next)
	}
	return "WaitingForBudget", ""
}

// updateErrors names the instances whose update cannot go on and why,
// the first few by index.
func (p *planner) updateErrors() string {
	const shown = 3
	var failed []Instance
	for _, inst := range p.in.Instances {
		if inst.UpdateError != "" {
			failed = append(failed, inst)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	slices.SortFunc(failed, func(a, b Instance) int { return a.ID - b.ID })
	var parts []string
	for _, inst := range failed[:min(shown, len(failed))] {
		parts = append(parts, fmt.Sprintf("instance %d: %s", inst.ID, inst.UpdateError))
	}
	msg := fmt.Sprintf("%d/%d instances failed to update (%s", len(failed), len(p.in.Instances), strings.Join(parts, "; "))
	if len(failed) > shown {
		msg += fmt.Sprintf("; and %d more", len(failed)-shown)
	}
	return msg + ")"
}

// allocatedNote says which allocated instances the rollout waits for,
// and which it updates anyway.
func allocatedNote(held, overdue []int) string {
	note := ""
	slices.Sort(held)
	slices.Sort(overdue)
	if len(held) > 0 {
		wait := "instances wait"
		if len(held) == 1 {
			wait = "instance waits"
		}
		note += fmt.Sprintf("; %d allocated %s for release (%s)", len(held), wait, instanceList(held))
	}
	if len(overdue) > 0 {
		note += fmt.Sprintf("; allocated instances %s updated anyway: allocatedTimeoutSeconds passed", instanceList(overdue))
	}
	return note
}

// instanceList names the first few of indexes (sorted).
func instanceList(indexes []int) string {
	const shown = 5
	var parts []string
	for _, i := range indexes[:min(shown, len(indexes))] {
		parts = append(parts, strconv.Itoa(i))
	}
	if len(indexes) > shown {
		parts = append(parts, fmt.Sprintf("and %d more", len(indexes)-shown))
	}
	return strings.Join(parts, ", ")
}

func waitReason(w *Wait) string {
	return map[WaitKind]string{WaitPause: "CanaryPauseStep", WaitHook: "CanaryHookStep", WaitInconclusive: "HookInconclusive",
		WaitBatch: "RollingManually"}[w.Kind]
}

func (p *planner) waitMessage(w *Wait) string {
	step := fmt.Sprintf("canary step %d/%d", w.Step+1, len(p.in.Strategy.Steps))
	switch w.Kind {
	case WaitPause:
		if !w.Until.IsZero() {
			return fmt.Sprintf("%s: pause until %s", step, w.Until.UTC().Format(time.RFC3339))
		}
		return step + ": paused until promote"
	case WaitHook:
		return fmt.Sprintf("%s: waiting for hook %s", step, p.in.Strategy.Steps[w.Step].Hook.TemplateName)
	case WaitInconclusive:
		return fmt.Sprintf("%s: %s", step, w.Message)
	}
	return fmt.Sprintf("batch %d done (rollingManually): waiting for promote", p.st.Batches)
}

// Indexes returns the indexes of moves, for logs and tests.
func Indexes(moves []Move) []int {
	out := make([]int, len(moves))
	for i, m := range moves {
		out[i] = m.Index
	}
	slices.Sort(out)
	return out
}
