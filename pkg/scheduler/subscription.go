package scheduler

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosconn"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

// event is what the subscription goroutine hands the loop.
type event struct {
	in       Input
	err      error        // the subscription ended
	caller   calls.Caller // with SUBSCRIBED: where calls go from now on
	received time.Time    // when it came off the stream
}

// subscriptionInput is the core input of an event from the subscription;
// nil when the core has nothing to do with it (an executor's answer to a
// message, which goes to its waiter).
func (d *Driver) subscriptionInput(ev event) Input {
	if ev.err != nil {
		d.caller = nil
		return Disconnected{}
	}
	if ev.caller != nil {
		d.caller = ev.caller
	}
	if m, ok := ev.in.(ExecutorMessage); ok && d.answered(m) {
		return nil
	}
	return ev.in
}

// subscription is the goroutine that keeps the Mesos subscription open,
// while the engine is not stopped.
type subscription struct {
	events chan event
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *subscription) running() bool { return s.cancel != nil }

func (s *subscription) start(ctx context.Context, d *Driver) {
	subCtx, cancel := context.WithCancel(ctx)
	s.cancel, s.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		d.subscribeLoop(subCtx, s.events)
	}(s.done)
}

// stop ends the subscription and drops what it had sent: the core is
// told it is disconnected.
func (s *subscription) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel = nil
	for {
		select {
		case <-s.events:
		default:
			return
		}
	}
}

// subscribeLoop keeps a subscription open, reconnecting with capped
// exponential backoff, and forwards its events.
func (d *Driver) subscribeLoop(ctx context.Context, events chan<- event) {
	const initialBackoff = 500 * time.Millisecond
	backoff := initialBackoff
	for attempt := 0; ; attempt++ {
		master := d.cfg.Masters[attempt%len(d.cfg.Masters)]
		subscribed, err := d.subscribeOnce(ctx, master, events)
		if ctx.Err() != nil {
			return
		}
		if subscribed {
			backoff = initialBackoff
		}
		var undecodable *mesoswire.DecodeError
		if errors.As(err, &undecodable) {
			d.log.Error("undecodable event from the master; subscribing again", "master", master, "err", err, "retry_in", backoff)
		} else {
			d.log.Warn("mesos subscription ended", "master", master, "err", err, "retry_in", backoff)
		}
		select {
		case events <- event{err: err}:
		case <-ctx.Done():
			return
		}
		select {
		case <-d.cfg.Clock.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, d.cfg.BackoffMax)
	}
}

// subscribeOnce subscribes to one master and reads its events until the
// stream ends or the heartbeats stop. It reports whether the master
// accepted the subscription (SUBSCRIBED arrived).
func (d *Driver) subscribeOnce(ctx context.Context, master string, events chan<- event) (bool, error) {
	caller, err := d.schedulerCaller(master)
	if err != nil {
		return false, err
	}
	resp, err := caller.Call(ctx, d.subscribeCall())
	if err != nil {
		return false, d.subscriptionRefused(master, err)
	}
	defer resp.Close()
	s := &stream{d: d, master: master, caller: caller, events: events, heartbeat: 30 * time.Second,
		agentsChanged: make(chan struct{}, 1)}
	defer s.stopAgentSync()
	return s.read(ctx, resp)
}

// schedulerCaller is a client of master's scheduler API.
func (d *Driver) schedulerCaller(master string) (calls.Caller, error) {
	conn := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second),
		// A connection for each call a step sends at once (send).
		httpcli.Transport(mesosconn.KeepConns(callsInFlight))}
	if d.cfg.Mesos.TLS != nil {
		conn = append(conn, httpcli.TLSConfig(d.cfg.Mesos.TLS))
	}
	if d.cfg.Mesos.Authenticates() {
		// Read at each subscription: a rotated secret takes effect.
		secret, err := d.cfg.Mesos.Secret()
		if err != nil {
			return nil, err
		}
		conn = append(conn, httpcli.BasicAuth(d.cfg.Mesos.Principal, secret))
	}
	cli := httpcli.New(
		httpcli.Endpoint(strings.TrimSuffix(master, "/")+"/api/v1/scheduler"),
		httpcli.Codec(d.cfg.Encoding),
		httpcli.Do(httpcli.With(conn...)),
	)
	return httpsched.NewCaller(cli, httpsched.MaxRedirects(4)), nil
}

// subscribeCall is the framework's SUBSCRIBE, with its ID once it has
// one (failover).
func (d *Driver) subscribeCall() *scheduler.Call {
	failover := d.cfg.FailoverTimeout.Seconds()
	checkpoint := true
	info := &mesos.FrameworkInfo{
		User: d.cfg.User, Name: "bcs", Role: &d.cfg.Role, FailoverTimeout: &failover, Checkpoint: &checkpoint,
		Capabilities: []mesos.FrameworkInfo_Capability{
			{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
			{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE},
		},
	}
	if d.cfg.Mesos.Principal != "" {
		info.Principal = &d.cfg.Mesos.Principal
	}
	subscribe := calls.Subscribe(info)
	if id := d.knownFrameworkID(); id != "" {
		info.ID = &mesos.FrameworkID{Value: id}
		subscribe = subscribe.With(calls.Framework(id))
	}
	return subscribe
}

// stream is one subscription's event stream as subscribeOnce reads it.
type stream struct {
	d      *Driver
	master string
	caller calls.Caller // where calls go once SUBSCRIBED came
	events chan<- event
	// subscribed: SUBSCRIBED came; heartbeat is the interval it gave.
	subscribed bool
	heartbeat  time.Duration
	// agentsChanged pokes the agent sync (agentsync.go), which runs from
	// SUBSCRIBED until stopSync.
	agentsChanged chan struct{}
	stopSync      context.CancelFunc
}

// read hands the loop the stream's events until it ends, fails or the
// master falls silent for three heartbeats.
func (s *stream) read(ctx context.Context, resp mesos.Response) (bool, error) {
	decoded, decodeErr := decodeEvents(ctx, resp)
	timer := s.d.cfg.Clock.NewTimer(3 * s.heartbeat)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.subscribed, ctx.Err()
		case err := <-decodeErr:
			return s.subscribed, s.decodeFailed(ctx, err)
		case <-timer.Chan():
			return s.subscribed, fmt.Errorf("no event for %s: missed heartbeats", 3*s.heartbeat)
		case e := <-decoded:
			if err := s.take(ctx, e); err != nil {
				return s.subscribed, err
			}
			// The master's silence counts from here: the time the loop
			// took to take the event (a long step, a full queue) is not
			// the master's, and the stream held its events meanwhile.
			timer.Reset(3 * s.heartbeat)
			if e.GetType() == scheduler.Event_ERROR {
				return s.subscribed, fmt.Errorf("master error: %s", e.GetError().GetMessage())
			}
		}
	}
}

// decodeEvents decodes resp's events on a goroutine of its own, until
// one cannot be decoded (the stream ended, or failed) or ctx ends.
func decodeEvents(ctx context.Context, resp mesos.Response) (<-chan *scheduler.Event, <-chan error) {
	decoded := make(chan *scheduler.Event)
	failed := make(chan error, 1)
	go func() {
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				failed <- err
				return
			}
			select {
			case decoded <- &e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return decoded, failed
}

// take hands the loop e's input — but the executor messages offLoop
// takes, usage reports —, with SUBSCRIBED the caller (and starts the
// agent sync), and pokes the agent sync when e hints that an agent
// changed.
func (s *stream) take(ctx context.Context, e *scheduler.Event) error {
	if sub := e.GetSubscribed(); sub != nil && sub.GetHeartbeatIntervalSeconds() > 0 {
		s.heartbeat = time.Duration(sub.GetHeartbeatIntervalSeconds() * float64(time.Second))
	}
	if agentChangeHint(e) {
		select {
		case s.agentsChanged <- struct{}{}:
		default: // a sync is due already
		}
	}
	in := eventInput(e)
	if in == nil || s.d.offLoop(in) {
		return nil
	}
	ev := event{in: in, received: s.d.cfg.Clock.Now()}
	if sub, ok := in.(Subscribed); ok {
		if !s.subscribed {
			s.startAgentSync(ctx)
		}
		s.subscribed = true
		ev.caller = s.caller
		s.d.frameworkID.Store(&sub.FrameworkID)
	}
	return s.forward(ctx, ev)
}

// decodeFailed is err, the reason the stream could not be read further.
// A SUBSCRIBED we cannot read still names our framework: keep that ID,
// or the next SUBSCRIBE registers another framework.
func (s *stream) decodeFailed(ctx context.Context, err error) error {
	var undecodable *mesoswire.DecodeError
	if s.subscribed || !errors.As(err, &undecodable) {
		return err
	}
	if id := mesoswire.SubscribedFrameworkID(undecodable); id != "" {
		s.d.frameworkID.Store(&id)
		if ferr := s.forward(ctx, event{in: LearnedFrameworkID{FrameworkID: id}}); ferr != nil {
			return ferr
		}
	}
	return err
}

// startAgentSync starts reading the master's agents (syncAgents), which
// hands its lists to the loop as this stream's events.
func (s *stream) startAgentSync(ctx context.Context) {
	syncCtx, stop := context.WithCancel(ctx)
	s.stopSync = stop
	go s.d.syncAgents(syncCtx, s.master, s.agentsChanged, func(in AgentsListed) error { return s.forward(ctx, event{in: in}) })
}

func (s *stream) stopAgentSync() {
	if s.stopSync != nil {
		s.stopSync()
	}
}

// forward hands ev to the loop.
func (s *stream) forward(ctx context.Context, ev event) error {
	select {
	case s.events <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// subscriptionRefused says what a failed SUBSCRIBE means when the
// master did not take the framework's credential or the driver did not
// take the master's certificate.
func (d *Driver) subscriptionRefused(master string, err error) error {
	var unverified *tls.CertificateVerificationError
	switch {
	case apierrors.CodeNotAuthenticated.Matches(err) && d.cfg.Mesos.Authenticates():
		return fmt.Errorf("master %s refused the credential of principal %q (is the secret of --mesos-secret-file among the master's --credentials?): %w: %w",
			master, d.cfg.Mesos.Principal, errdefs.ErrUnauthenticated, err)
	case apierrors.CodeNotAuthenticated.Matches(err):
		return fmt.Errorf("master %s authenticates frameworks: give the framework a principal and its secret (--mesos-principal, --mesos-secret-file): %w: %w",
			master, errdefs.ErrUnauthenticated, err)
	case errors.As(err, &unverified):
		return fmt.Errorf("master %s: cannot verify its TLS certificate (--mesos-cacert names the CA that signed it): %w: %w", master, errdefs.ErrUnauthenticated, err)
	}
	return err
}

// knownFrameworkID is the ID to subscribe with; "" registers a new
// framework.
func (d *Driver) knownFrameworkID() string {
	if id := d.frameworkID.Load(); id != nil {
		return *id
	}
	return ""
}

// eventInput turns a Mesos event into a core input; nil when the core has
// nothing to do with it.
func eventInput(e *scheduler.Event) Input {
	switch e.GetType() {
	case scheduler.Event_SUBSCRIBED:
		return Subscribed{FrameworkID: e.GetSubscribed().GetFrameworkID().GetValue()}
	case scheduler.Event_OFFERS:
		return OffersIn{Offers: e.GetOffers().GetOffers()}
	case scheduler.Event_RESCIND:
		return Rescind{OfferID: e.GetRescind().OfferID.Value}
	case scheduler.Event_INVERSE_OFFERS:
		return InverseOffersIn{InverseOffers: e.GetInverseOffers().GetInverseOffers()}
	case scheduler.Event_RESCIND_INVERSE_OFFER:
		return RescindInverseOffer{OfferID: e.GetRescindInverseOffer().InverseOfferID.Value}
	case scheduler.Event_UPDATE:
		return StatusUpdates{Statuses: []mesos.TaskStatus{e.GetUpdate().GetStatus()}}
	case scheduler.Event_MESSAGE:
		m := e.GetMessage()
		return ExecutorMessage{AgentID: m.AgentID.Value, ExecutorID: m.ExecutorID.Value, Data: m.GetData()}
	}
	return nil
}
