package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Election elects one leader among the replicas that campaign under one
// name. Leadership lasts while the leader's etcd session lives: a leader
// that dies or loses etcd for longer than the TTL is replaced.
type Election struct {
	session  *concurrency.Session
	election *concurrency.Election
	fence    *Fence // the term Campaign won; nil before
}

// electionPrefix holds the elections: a key per campaigning replica.
const electionPrefix = "election/"

// NewElection joins the election name (relative to the store prefix) with
// a session of ttl (rounded to seconds, at least 1).
func (s *Store) NewElection(ctx context.Context, name string, ttl time.Duration) (*Election, error) {
	if err := ValidateSegment(name); err != nil {
		return nil, err
	}
	secs := max(int(ttl.Round(time.Second)/time.Second), 1)
	session, err := concurrency.NewSession(s.client, concurrency.WithTTL(secs), concurrency.WithContext(ctx))
	if err != nil {
		return nil, classify(ctx, "election session", err)
	}
	return &Election{session: session, election: concurrency.NewElection(session, s.prefix+electionPrefix+name)}, nil
}

// Campaign blocks until this replica leads, announcing value (its API
// URL), or ctx ends.
func (e *Election) Campaign(ctx context.Context, value string) error {
	if err := e.election.Campaign(ctx, value); err != nil {
		return classify(ctx, "campaign", err)
	}
	e.fence = &Fence{key: e.election.Key(), rev: e.election.Rev(), refused: make(chan struct{})}
	return nil
}

// Fence returns the fence of the term Campaign won (see WithFence), or
// nil before Campaign returned.
func (e *Election) Fence() *Fence { return e.fence }

// Leader returns the value the current leader announced, or "" when there
// is none.
func (e *Election) Leader(ctx context.Context) (string, error) {
	resp, err := e.election.Leader(ctx)
	if errors.Is(err, concurrency.ErrElectionNoLeader) {
		return "", nil
	}
	if err != nil {
		return "", classify(ctx, "leader", err)
	}
	return string(resp.Kvs[0].Value), nil
}

// Observe sends the leader's value every time leadership changes, until
// ctx ends.
func (e *Election) Observe(ctx context.Context) <-chan string {
	out := make(chan string, 1)
	go func() {
		defer close(out)
		for resp := range e.election.Observe(ctx) {
			if len(resp.Kvs) > 0 {
				select {
				case out <- string(resp.Kvs[0].Value):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// Lost is closed when the session ends: a leader must stop leading.
func (e *Election) Lost() <-chan struct{} { return e.session.Done() }

// Resign gives leadership up, if held, and ends the session.
func (e *Election) Resign(ctx context.Context) error {
	err := e.election.Resign(ctx)
	if cerr := e.session.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("resign: %w: %w", errdefs.ErrUnavailable, err)
	}
	return nil
}
