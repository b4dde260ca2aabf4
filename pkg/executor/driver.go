package executor

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// DefaultKillGrace is the kill grace period when neither the KILL event,
// the TaskInfo kill policy nor the TaskSpec sets one (seed 000:
// killPolicy.gracePeriod defaults to 1 second).
const DefaultKillGrace = time.Second

// ErrAgentGone is returned by Run when the agent stayed away longer than
// the recovery timeout (or at all, without checkpointing).
var ErrAgentGone = fmt.Errorf("agent disconnected: %w", errdefs.ErrUnavailable)

// Config configures a Driver.
type Config struct {
	// Env is the Mesos executor environment (config.FromEnv).
	Env     config.Config
	Runtime Runtime
	// Clock defaults to the wall clock.
	Clock clockwork.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Codec is the wire encoding; mesoswire.Protobuf by default.
	Codec encoding.Codec
	// AgentTLS makes the executor speak HTTPS to its agent (AgentTLS);
	// nil: plain HTTP.
	AgentTLS *tls.Config
	// AckTimeout bounds the wait for acknowledgements once every task is
	// terminal; default 10s.
	AckTimeout time.Duration
	// AllTerminal, when set, is called once every task became terminal,
	// before the wait for their acknowledgements: what the tasks held
	// (their cgroups) is given back then, as the agent kills an executor
	// its shutdown grace period (5 s by default) after asking it to end,
	// sooner than AckTimeout.
	AllTerminal func()
	// CallTimeout bounds one UPDATE or MESSAGE call; default 10s.
	CallTimeout time.Duration
	// Jitter draws, in [0, 1), where in its range each random wait
	// falls: the wait before the executor tries to subscribe again (a
	// fraction of resubscribeWaitMax), the wait between two usage
	// reports (the interval ±10 %); default math/rand/v2's Float64. It
	// is called from several goroutines.
	Jitter func() float64
	// Sweep reaps what dead executors left on the agent and says what it
	// reaped; it runs for every sweep task (proto.SweepSpec). Nil fails
	// sweep tasks.
	Sweep func(ctx context.Context) (string, error)
}

// Driver speaks the executor API for one executor and drives a Runtime.
type Driver struct {
	cfg        Config
	subscriber calls.Sender
	sender     calls.Sender

	mu              sync.Mutex
	tasks           map[string]*taskRecord
	order           []string // task IDs in launch order
	unackedTasks    map[string]mesos.TaskInfo
	unackedUpdates  map[string]executor.Call_Update // by uuid hex
	updateOrder     []string                        // uuids in send order
	agentID         *mesos.AgentID
	killingCapable  bool
	shuttingDown    bool
	allTerminalAt   time.Time
	done            chan struct{}
	doneOnce        sync.Once
	runtimeCtx      context.Context
	cancelRuntime   context.CancelFunc
	runtimeShutdown sync.Once
	// usage is the usage reporter of each task's group, by task ID
	// (usage.go); empty when the runtime measures no usage.
	usage map[string]*usageReporter
}

type taskRecord struct {
	info      mesos.TaskInfo
	spec      *proto.TaskSpec
	state     taskstate.State
	healthy   *bool
	data      []byte
	ips       []string
	killGrace time.Duration
}

// New returns a driver for cfg.
func New(cfg Config) *Driver {
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Codec.Name == "" {
		cfg.Codec = mesoswire.Protobuf
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 10 * time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	if cfg.Jitter == nil {
		cfg.Jitter = mathrand.Float64
	}
	endpoint := url.URL{Scheme: "http", Host: cfg.Env.AgentEndpoint, Path: "/api/v1/executor"}
	var agentTLS []httpcli.ConfigOpt
	if cfg.AgentTLS != nil {
		endpoint.Scheme = "https"
		agentTLS = []httpcli.ConfigOpt{httpcli.TLSConfig(cfg.AgentTLS)}
	}
	opts := executor.CallOptions{calls.Framework(cfg.Env.FrameworkID), calls.Executor(cfg.Env.ExecutorID)}
	streamCli := httpcli.New(httpcli.Endpoint(endpoint.String()), httpcli.Codec(cfg.Codec),
		httpcli.Do(httpcli.With(append(slices.Clone(httpcli.DefaultConfigOpt), agentTLS...)...)))
	callCli := httpcli.New(httpcli.Endpoint(endpoint.String()), httpcli.Codec(cfg.Codec),
		httpcli.Do(httpcli.With(append(agentTLS, httpcli.Timeout(cfg.CallTimeout))...)))
	d := &Driver{
		cfg:            cfg,
		subscriber:     calls.SenderWith(httpexec.NewSender(streamCli.Send, httpcli.Close(true)), opts...),
		sender:         calls.SenderWith(httpexec.NewSender(callCli.Send), opts...),
		tasks:          map[string]*taskRecord{},
		unackedTasks:   map[string]mesos.TaskInfo{},
		unackedUpdates: map[string]executor.Call_Update{},
		usage:          map[string]*usageReporter{},
		done:           make(chan struct{}),
	}
	d.runtimeCtx, d.cancelRuntime = context.WithCancel(context.Background())
	return d
}

// Run subscribes and serves events until the executor is done (every task
// terminal and acknowledged, or SHUTDOWN), ctx ends, or the agent is gone
// for longer than the recovery timeout. It returns nil when done.
func (d *Driver) Run(ctx context.Context) error {
	defer d.cancelRuntime()
	var disconnectedAt time.Time
	for {
		err := d.serveOnce(ctx)
		if d.isDone() {
			return nil
		}
		if ctx.Err() != nil {
			d.shutdownRuntime()
			return ctx.Err()
		}
		now := d.cfg.Clock.Now()
		if disconnectedAt.IsZero() || err == nil {
			// err == nil: we were subscribed, so the outage starts now.
			disconnectedAt = now
		}
		if !d.cfg.Env.Checkpoint {
			d.log().Warn("agent connection lost and checkpointing is off: shutting down", "err", err)
			d.shutdownRuntime()
			return fmt.Errorf("%w: %v", ErrAgentGone, err)
		}
		if now.Sub(disconnectedAt) >= d.cfg.Env.RecoveryTimeout {
			d.log().Warn("agent away longer than the recovery timeout: shutting down", "away", now.Sub(disconnectedAt), "recovery_timeout", d.cfg.Env.RecoveryTimeout)
			d.shutdownRuntime()
			return fmt.Errorf("%w for longer than the recovery timeout %v: %v", ErrAgentGone, d.cfg.Env.RecoveryTimeout, err)
		}
		// As Mesos' executor library does: the first attempt at once,
		// each next one after a random wait, so that the executors of a
		// restarted agent do not come back all at once, nor late.
		wait := time.Duration(0)
		if err != nil {
			wait = time.Duration(d.cfg.Jitter() * float64(d.resubscribeWaitMax()))
		}
		d.log().Warn("agent connection lost; subscribing again", "err", err, "retry_in", wait)
		select {
		case <-d.cfg.Clock.After(wait):
		case <-ctx.Done():
		case <-d.done:
		}
	}
}

// resubscribeWaitMax is the longest wait between two attempts to
// subscribe again: half of MESOS_SUBSCRIPTION_BACKOFF_MAX, which Mesos
// sets to its default --executor_reregistration_timeout (2secs), the
// window a restarted agent gives its executors to come back; so an
// executor tries again at most 1s after the agent answers, half the
// window left for the subscription. Mesos' own library waits up to the
// whole value, which a loaded agent can miss. Half of
// MESOS_RECOVERY_TIMEOUT bounds it too, should that be shorter.
func (d *Driver) resubscribeWaitMax() time.Duration {
	longest := d.cfg.Env.RecoveryTimeout
	if b := d.cfg.Env.SubscriptionBackoffMax; b > 0 && (longest <= 0 || b < longest) {
		longest = b
	}
	return longest / 2
}

// serveOnce subscribes once and handles events until the stream ends. It
// returns nil when a subscription was established (and later lost or
// finished), the subscribe error otherwise.
func (d *Driver) serveOnce(ctx context.Context) error {
	d.mu.Lock()
	tasks, updates := d.unackedLocked()
	d.mu.Unlock()
	resp, err := d.subscriber.Send(ctx, calls.NonStreaming(calls.Subscribe(tasks, updates)))
	if err != nil {
		return err
	}
	defer resp.Close()
	events := make(chan *executor.Event)
	readErr := make(chan error, 1)
	go func() {
		for {
			var e executor.Event
			if err := resp.Decode(&e); err != nil {
				readErr <- err
				return
			}
			select {
			case events <- &e:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return
			case <-d.done:
				readErr <- nil
				return
			}
		}
	}()
	subscribed := false
	for {
		select {
		case e := <-events:
			if e.Type == executor.Event_SUBSCRIBED {
				subscribed = true
			}
			d.handle(e)
		case err := <-readErr:
			if !subscribed && err != nil {
				return err
			}
			d.log().Info("event stream ended", "err", err)
			return nil
		case <-d.done:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

func (d *Driver) unackedLocked() ([]mesos.TaskInfo, []executor.Call_Update) {
	var tasks []mesos.TaskInfo
	for _, id := range d.order {
		if info, ok := d.unackedTasks[id]; ok {
			tasks = append(tasks, info)
		}
	}
	var updates []executor.Call_Update
	for _, u := range d.updateOrder {
		if up, ok := d.unackedUpdates[u]; ok {
			updates = append(updates, up)
		}
	}
	return tasks, updates
}

func (d *Driver) handle(e *executor.Event) {
	switch e.Type {
	case executor.Event_SUBSCRIBED:
		s := e.Subscribed
		d.mu.Lock()
		d.agentID = s.AgentInfo.ID
		d.killingCapable = false
		for _, c := range s.FrameworkInfo.Capabilities {
			if c.GetType() == mesos.FrameworkInfo_Capability_TASK_KILLING_STATE {
				d.killingCapable = true
			}
		}
		d.mu.Unlock()
		d.log().Info("subscribed", "agent", s.AgentInfo.GetID().GetValue(), "hostname", s.AgentInfo.Hostname)
	case executor.Event_LAUNCH:
		d.launch([]mesos.TaskInfo{e.Launch.Task})
	case executor.Event_LAUNCH_GROUP:
		d.launch(e.LaunchGroup.TaskGroup.Tasks)
	case executor.Event_KILL:
		d.kill(e.Kill.TaskID.Value, e.Kill.KillPolicy)
	case executor.Event_ACKNOWLEDGED:
		d.acknowledged(e.Acknowledged.TaskID.Value, e.Acknowledged.UUID)
	case executor.Event_MESSAGE:
		d.message(e.Message.Data)
	case executor.Event_SHUTDOWN:
		d.log().Info("SHUTDOWN from the agent")
		d.mu.Lock()
		d.shuttingDown = true
		d.mu.Unlock()
		go func() {
			d.shutdownRuntime()
			d.checkDone()
		}()
	case executor.Event_ERROR:
		d.log().Error("agent ERROR", "message", e.Error.Message)
	case executor.Event_HEARTBEAT:
	default:
		d.log().Info("ignoring event", "type", e.Type)
	}
}

// launch records the tasks, fails those whose spec does not decode, runs
// sweep tasks itself and hands the rest to the runtime.
func (d *Driver) launch(infos []mesos.TaskInfo) {
	var group, sweeps []Task
	var invalid []Report
	d.mu.Lock()
	for _, info := range infos {
		id := info.TaskID.Value
		if _, dup := d.tasks[id]; dup {
			d.log().Warn("ignoring a second launch", "task", id)
			continue
		}
		rec := &taskRecord{info: info, state: taskstate.Staging}
		d.tasks[id] = rec
		d.order = append(d.order, id)
		d.unackedTasks[id] = info
		spec, err := proto.DecodeTaskSpec(info.Data)
		if err != nil {
			reason := mesos.REASON_TASK_INVALID
			invalid = append(invalid, Report{TaskID: id, State: taskstate.Failed, Reason: &reason, Message: err.Error()})
			continue
		}
		rec.spec = spec
		rec.killGrace = killGrace(nil, info.KillPolicy, spec)
		t := Task{Info: info, Spec: spec, KillGrace: rec.killGrace}
		if spec.Sweep != nil {
			sweeps = append(sweeps, t)
		} else {
			group = append(group, t)
		}
	}
	shutting := d.shuttingDown
	d.mu.Unlock()
	if len(sweeps) > 0 && len(group) > 0 {
		invalid = append(invalid, refuse(sweeps, taskstate.Failed, mesos.REASON_TASK_GROUP_INVALID, "a sweep task runs alone in its group")...)
		sweeps = nil
	}
	if len(invalid) > 0 {
		// A task group is all or nothing: fail the valid tasks too.
		invalid = append(invalid, refuse(append(group, sweeps...), taskstate.Failed, mesos.REASON_TASK_GROUP_INVALID, "another task of the group is invalid")...)
		group, sweeps = nil, nil
	}
	if shutting {
		invalid = append(invalid, refuse(append(group, sweeps...), taskstate.Killed, -1, "executor is shutting down")...)
		group, sweeps = nil, nil
	}
	for _, r := range invalid {
		d.Report(r)
	}
	for _, t := range sweeps {
		go d.sweep(t)
	}
	if len(group) > 0 {
		d.cfg.Runtime.Launch(d.runtimeCtx, group, d)
		d.startUsage(group)
	}
}

// refuse reports tasks as ended in state, with reason unless it is -1.
func refuse(tasks []Task, state taskstate.State, reason mesos.TaskStatus_Reason, msg string) []Report {
	out := make([]Report, len(tasks))
	for i, t := range tasks {
		out[i] = Report{TaskID: t.ID(), State: state, Message: msg}
		if reason >= 0 {
			out[i].Reason = reason.Enum()
		}
	}
	return out
}

// sweep runs a sweep task: the executor reaps what dead executors left
// and finishes, saying what it reaped.
func (d *Driver) sweep(t Task) {
	d.log().Info("sweep task", "task", t.ID(), "reason", t.Spec.Sweep.Reason)
	d.Report(Report{TaskID: t.ID(), State: taskstate.Running})
	if d.cfg.Sweep == nil {
		d.Report(Report{TaskID: t.ID(), State: taskstate.Failed, Reason: mesos.REASON_TASK_INVALID.Enum(), Message: "this executor cannot sweep"})
		return
	}
	summary, err := d.cfg.Sweep(d.runtimeCtx)
	if err != nil {
		d.Report(Report{TaskID: t.ID(), State: taskstate.Failed, Message: "sweep: " + err.Error()})
		return
	}
	d.Report(Report{TaskID: t.ID(), State: taskstate.Finished, Message: summary})
}

// killGrace picks the kill grace period: the KILL event's policy, else the
// TaskInfo's, else the spec's, else DefaultKillGrace.
func killGrace(event, task *mesos.KillPolicy, spec *proto.TaskSpec) time.Duration {
	for _, p := range []*mesos.KillPolicy{event, task} {
		if p != nil && p.GracePeriod != nil {
			return time.Duration(p.GracePeriod.Nanoseconds)
		}
	}
	if spec != nil && spec.KillGracePeriodSeconds > 0 {
		return time.Duration(spec.KillGracePeriodSeconds * float64(time.Second))
	}
	return DefaultKillGrace
}

func (d *Driver) kill(id string, policy *mesos.KillPolicy) {
	d.mu.Lock()
	rec, ok := d.tasks[id]
	if !ok || rec.state.Terminal() || rec.state == taskstate.Killing {
		d.mu.Unlock()
		d.log().Info("ignoring KILL: task unknown, terminal or already killing", "task", id)
		return
	}
	grace := killGrace(policy, rec.info.KillPolicy, rec.spec)
	sweeping := rec.spec != nil && rec.spec.Sweep != nil
	d.mu.Unlock()
	d.Report(Report{TaskID: id, State: taskstate.Killing})
	if sweeping {
		return // a sweep is short and must not be cut off: it ends by itself
	}
	d.cfg.Runtime.Kill(id, grace)
}

func (d *Driver) acknowledged(taskID string, uuid []byte) {
	d.mu.Lock()
	delete(d.unackedUpdates, hex.EncodeToString(uuid))
	delete(d.unackedTasks, taskID)
	d.mu.Unlock()
	d.checkDone()
}

func (d *Driver) message(data []byte) {
	msg, err := proto.DecodeMessage(data)
	if err != nil {
		d.sendResult(proto.MessageResult{Error: fmt.Sprintf("bad message: %v", err)})
		return
	}
	d.mu.Lock()
	rec, ok := d.tasks[msg.TaskID]
	var refresh *Report
	if ok && msg.Type == proto.MessageReportStatus {
		refresh = &Report{TaskID: msg.TaskID, State: rec.state, Healthy: rec.healthy}
	}
	d.mu.Unlock()
	res := proto.MessageResult{ID: msg.ID, Type: msg.Type, TaskID: msg.TaskID}
	switch {
	case !ok:
		res.Error = fmt.Sprintf("task %q: %v", msg.TaskID, errdefs.ErrNotFound)
	case refresh != nil:
		d.resend(*refresh)
		res.OK = true
	case msg.Type == proto.MessageUsageInterval:
		if err := d.setUsageInterval(msg); err != nil {
			res.Error = err.Error()
		}
		res.OK = res.Error == ""
	default:
		go func() {
			ctx := d.runtimeCtx
			if msg.Timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, msg.Timeout)
				defer cancel()
			}
			r := d.cfg.Runtime.Message(ctx, msg)
			r.ID, r.Type, r.TaskID = msg.ID, msg.Type, msg.TaskID
			d.sendResult(r)
		}()
		return
	}
	d.sendResult(res)
}

func (d *Driver) sendResult(r proto.MessageResult) {
	data, err := r.Encode()
	if err != nil {
		d.log().Error("encode message result", "err", err)
		return
	}
	if err := calls.SendNoData(context.Background(), d.sender, calls.NonStreaming(calls.Message(data))); err != nil {
		d.log().Warn("send message result", "id", r.ID, "err", err)
	}
}

// Report implements Reporter: it checks the transition, builds the
// TaskStatus and sends the UPDATE (kept until acknowledged).
func (d *Driver) Report(r Report) {
	d.mu.Lock()
	rec, ok := d.tasks[r.TaskID]
	if !ok {
		d.mu.Unlock()
		d.log().Warn("report for an unknown task dropped", "task", r.TaskID)
		return
	}
	next, err := taskstate.Transition(rec.state, r.State)
	if err != nil {
		d.mu.Unlock()
		d.log().Warn("report dropped", "task", r.TaskID, "err", err)
		return
	}
	rec.state = next
	if r.Healthy != nil {
		rec.healthy = r.Healthy
	}
	if r.Data != nil {
		rec.data = r.Data
	}
	if r.IPAddresses != nil {
		rec.ips = r.IPAddresses
	}
	if next == taskstate.Killing && !d.killingCapable {
		d.mu.Unlock()
		return
	}
	up := d.updateLocked(rec, r)
	d.mu.Unlock()
	d.send(up)
	d.checkDone()
}

// resend reports the current state again with a new uuid.
func (d *Driver) resend(r Report) {
	d.mu.Lock()
	rec := d.tasks[r.TaskID]
	up := d.updateLocked(rec, r)
	d.mu.Unlock()
	d.send(up)
}

func (d *Driver) updateLocked(rec *taskRecord, r Report) executor.Call_Update {
	uuid := newUUID()
	ts := float64(d.cfg.Clock.Now().UnixNano()) / 1e9
	status := mesos.TaskStatus{
		TaskID:     rec.info.TaskID,
		State:      mesosState(rec.state).Enum(),
		Source:     mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &mesos.ExecutorID{Value: d.cfg.Env.ExecutorID},
		AgentID:    d.agentID,
		UUID:       uuid,
		Timestamp:  &ts,
		Healthy:    rec.healthy,
		Data:       rec.data,
		Reason:     r.Reason,
	}
	if r.Message != "" {
		msg := r.Message
		status.Message = &msg
	}
	if len(rec.ips) > 0 {
		network := mesos.NetworkInfo{}
		for _, ip := range rec.ips {
			network.IPAddresses = append(network.IPAddresses, mesos.NetworkInfo_IPAddress{IPAddress: &ip})
		}
		status.ContainerStatus = &mesos.ContainerStatus{NetworkInfos: []mesos.NetworkInfo{network}}
	}
	up := executor.Call_Update{Status: status}
	key := hex.EncodeToString(uuid)
	d.unackedUpdates[key] = up
	d.updateOrder = append(d.updateOrder, key)
	if rec.state.Terminal() && d.allTerminalLocked() && d.allTerminalAt.IsZero() {
		d.allTerminalAt = d.cfg.Clock.Now()
		if d.cfg.AllTerminal != nil {
			go d.cfg.AllTerminal()
		}
		go d.ackDeadline()
	}
	return up
}

func (d *Driver) send(up executor.Call_Update) {
	st := up.Status
	attrs := []any{"task", st.TaskID.Value, "state", st.GetState().String(), "message", st.GetMessage()}
	if st.Reason != nil {
		attrs = append(attrs, "reason", st.GetReason().String())
	}
	d.log().Info("task update", attrs...)
	if err := calls.SendNoData(context.Background(), d.sender, calls.NonStreaming(calls.Update(st))); err != nil {
		// Kept in unackedUpdates: resent with the next SUBSCRIBE.
		d.log().Warn("send update; kept for the next SUBSCRIBE", "task", st.TaskID.Value, "state", st.GetState().String(), "err", err)
	}
}

func (d *Driver) allTerminalLocked() bool {
	if len(d.tasks) == 0 {
		return false
	}
	for _, rec := range d.tasks {
		if !rec.state.Terminal() {
			return false
		}
	}
	return true
}

// ackDeadline ends the executor AckTimeout after every task became
// terminal, acknowledged or not.
func (d *Driver) ackDeadline() {
	select {
	case <-d.cfg.Clock.After(d.cfg.AckTimeout):
		d.log().Warn("not every update acknowledged in time; exiting anyway", "ack_timeout", d.cfg.AckTimeout)
		d.finish()
	case <-d.done:
	}
}

func (d *Driver) checkDone() {
	d.mu.Lock()
	done := (d.allTerminalLocked() || d.shuttingDown && d.noLiveLocked()) && len(d.unackedUpdates) == 0
	d.mu.Unlock()
	if done {
		d.finish()
	}
}

func (d *Driver) noLiveLocked() bool {
	for _, rec := range d.tasks {
		if !rec.state.Terminal() {
			return false
		}
	}
	return true
}

func (d *Driver) log() *slog.Logger { return d.cfg.Logger }

func (d *Driver) finish() { d.doneOnce.Do(func() { close(d.done) }) }

func (d *Driver) isDone() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Done is closed when the executor has nothing left to do.
func (d *Driver) Done() <-chan struct{} { return d.done }

func (d *Driver) shutdownRuntime() {
	d.runtimeShutdown.Do(func() {
		grace := d.cfg.Env.ExecutorShutdownGracePeriod
		// Leave the agent a second of its own grace period to see our
		// updates before it kills us.
		if grace > 2*time.Second {
			grace -= time.Second
		}
		d.cfg.Runtime.Shutdown(grace)
	})
}

// Tasks returns the states of the tasks, by ID, for tests and logs.
func (d *Driver) Tasks() map[string]taskstate.State {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]taskstate.State, len(d.tasks))
	for id, rec := range d.tasks {
		out[id] = rec.state
	}
	return out
}

// Unacknowledged returns the IDs of tasks and the states of updates not
// yet acknowledged, sorted.
func (d *Driver) Unacknowledged() (tasks []string, updates []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id := range d.unackedTasks {
		tasks = append(tasks, id)
	}
	for _, up := range d.unackedUpdates {
		updates = append(updates, up.Status.TaskID.Value+":"+up.Status.GetState().String())
	}
	sort.Strings(tasks)
	sort.Strings(updates)
	return tasks, updates
}

// mesosState is the Mesos TaskState a task state maps onto.
func mesosState(s taskstate.State) mesos.TaskState {
	return mesos.TaskState(mesos.TaskState_value[s.MesosName()])
}

func newUUID() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(errors.Join(errors.New("crypto/rand"), err))
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}
