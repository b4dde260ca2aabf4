package store

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// ErrNoSpace is the class of a write etcd refused because its database
// reached its quota (--quota-backend-bytes) and it raised the NOSPACE
// alarm: it is an errdefs.ErrUnavailable, and no write but deletes
// succeeds until the database is compacted, defragmented below its quota
// and the alarm disarmed (Embedded.Reclaim does that for the embedded
// etcd; etcdctl compact, defrag and alarm disarm for another).
var ErrNoSpace = fmt.Errorf("etcd's database reached its quota (database space exceeded): etcd refuses writes until it is compacted, defragmented and its NOSPACE alarm disarmed: %w", errdefs.ErrUnavailable)

// Space is how full etcd's database is, on the fullest member.
type Space struct {
	// Endpoint is the member measured.
	Endpoint string
	// Size is its database file, what the quota limits; InUse the pages
	// holding revisions, the rest free pages that etcd reuses and a
	// defragmentation returns.
	Size, InUse int64
	// Quota is the member's --quota-backend-bytes (etcd's own default
	// when it sets none).
	Quota int64
	// NoSpace is set while a member's NOSPACE alarm is raised.
	NoSpace bool
}

// Used is the share of the quota the database file takes.
func (s Space) Used() float64 {
	if s.Quota <= 0 {
		return 0
	}
	return float64(s.Size) / float64(s.Quota)
}

// Space asks every endpoint for its database's size and quota and etcd
// for its alarms, and returns the fullest member's.
func (s *Store) Space(ctx context.Context) (Space, error) {
	ctx, cancel := context.WithTimeout(ctx, s.requestTimeout)
	defer cancel()
	return spaceOf(ctx, s.client)
}

func spaceOf(ctx context.Context, client *clientv3.Client) (Space, error) {
	var fullest Space
	for _, ep := range client.Endpoints() {
		status, err := client.Status(ctx, ep)
		if err != nil {
			return Space{}, classify(ctx, "status of "+ep, err)
		}
		m := Space{Endpoint: ep, Size: status.DbSize, InUse: status.DbSizeInUse, Quota: status.DbSizeQuota}
		if fullest.Endpoint == "" || m.Used() > fullest.Used() {
			fullest = m
		}
	}
	alarms, err := client.AlarmList(ctx)
	if err != nil {
		return Space{}, classify(ctx, "alarm list", err)
	}
	fullest.NoSpace = hasNoSpace(alarms)
	return fullest, nil
}

// reclaimedBelow is the share of its quota a database must be below for
// Reclaim to disarm the alarm: at the quota's edge the next writes would
// raise it again at once.
const reclaimedBelow = 0.9

// Reclaim makes room in the embedded etcd's database: it compacts away
// all history (a watch behind the current revision fails with
// ErrCompacted and re-lists), defragments the file, and once the file is
// below 90 % of the quota disarms the NOSPACE alarm so that etcd takes
// writes again. It returns the space after; NoSpace still set means the
// live data alone needs a larger quota. etcd serves nothing while it
// defragments: a seconds-long pause per GiB.
func (e *Embedded) Reclaim(ctx context.Context) (Space, error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: e.endpoints, DialTimeout: DefaultDialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return Space{}, classify(ctx, "connect", err)
	}
	defer client.Close()
	head, err := client.Get(ctx, "reclaim", clientv3.WithCountOnly())
	if err != nil {
		return Space{}, classify(ctx, "revision", err)
	}
	_, err = client.Compact(ctx, head.Header.Revision, clientv3.WithCompactPhysical())
	if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return Space{}, classify(ctx, "compact", err)
	}
	for _, ep := range e.endpoints {
		if _, err := client.Defragment(ctx, ep); err != nil {
			return Space{}, classify(ctx, "defragment "+ep, err)
		}
	}
	space, err := spaceOf(ctx, client)
	if err != nil || !space.NoSpace || space.Used() >= reclaimedBelow {
		return space, err
	}
	member := &clientv3.AlarmMember{MemberID: uint64(e.etcd.Server.MemberID()), Alarm: etcdserverpb.AlarmType_NOSPACE}
	if _, err := client.AlarmDisarm(ctx, member); err != nil {
		return Space{}, classify(ctx, "alarm disarm", err)
	}
	space.NoSpace = false
	return space, nil
}

func hasNoSpace(alarms *clientv3.AlarmResponse) bool {
	for _, a := range alarms.Alarms {
		if a.Alarm == etcdserverpb.AlarmType_NOSPACE {
			return true
		}
	}
	return false
}
