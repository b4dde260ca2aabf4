package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Changes reads, from etcd at endpoints, every change to any key made
// after store revision afterRev: "PUT <key>" or "DELETE <key>" in order,
// and the revision it read up to. Changes(t, endpoints, 0) returns only
// the current revision, to read the changes after it later.
func Changes(t testing.TB, endpoints []string, afterRev int64) ([]string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	defer client.Close()
	now, err := client.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("etcd revision: %v", err)
	}
	rev := now.Header.Revision
	if afterRev == 0 || rev == afterRev {
		return nil, rev
	}
	var changes []string
	// A watch response holds every event of the revisions it covers.
	for resp := range client.Watch(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(afterRev+1)) {
		if err := resp.Err(); err != nil {
			t.Fatalf("etcd watch from revision %d: %v", afterRev+1, err)
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision > rev {
				return changes, rev
			}
			changes = append(changes, fmt.Sprintf("%s %s", ev.Type, ev.Kv.Key))
			if ev.Kv.ModRevision == rev && ev == resp.Events[len(resp.Events)-1] {
				return changes, rev
			}
		}
	}
	t.Fatalf("etcd watch from revision %d ended before revision %d", afterRev+1, rev)
	return nil, 0
}

// ExpireLeader revokes, in etcd at endpoints, the lease of the leader of
// the election name under the store prefix: its session ends as when its
// TTL lapses, while the leader itself has not been told. It returns the
// value the leader announced.
func ExpireLeader(t testing.TB, endpoints []string, prefix, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	defer client.Close()
	leader, err := client.Get(ctx, prefix+"election/"+name+"/", clientv3.WithFirstCreate()...)
	if err != nil || len(leader.Kvs) == 0 {
		t.Fatalf("leader of election %q under %q: %v (%d keys)", name, prefix, err, len(leader.Kvs))
	}
	if _, err := client.Revoke(ctx, clientv3.LeaseID(leader.Kvs[0].Lease)); err != nil {
		t.Fatalf("revoke the leader's lease: %v", err)
	}
	return string(leader.Kvs[0].Value)
}
