package schedulerd_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// A deposed leader writes nothing and steps down. The standby
// of two replicas (4s sessions) is frozen with SIGSTOP, shorter than its
// TTL: it stays next in line and writes nothing. The leader's lease is
// revoked in etcd, as when its TTL lapses, without it being told (its
// session notices at its next keepalive), and at once a task fails: its
// driver acts on the update. Until it steps down, etcd records no change
// but in election/ — its driver's writes were fenced. The standby,
// resumed, leads and relaunches the failed instance; the old leader
// follows it.
func TestDeposedLeaderWritesNothing(t *testing.T) {
	etcd, cluster := startEtcdAndCluster(t)
	dir := t.TempDir()
	start := func(name string) *replica {
		return startReplicaWith(t, map[string]any{
			"Etcd": etcd.Endpoints()[0], "Master": cluster.MasterURL(), "DataDir": t.TempDir(),
			"KeyFile": filepath.Join(dir, "secret.key"), "ElectionTTL": 4 * time.Second, "LogFile": filepath.Join(dir, name+".log"),
		})
	}
	a, b := start("a"), start("b")
	leader, follower := whoLeads(t, a, b)
	post(t, "http://"+leader.addr+"/v1/apps", app)
	runningIDs(t, follower.addr)
	var v appView
	getJSON(t, "http://"+follower.addr+"/v1/apps/ns-a/game", &v)
	failedGroup, failed := v.Status.Instances[0].TaskGroupID, v.Status.Instances[0].Tasks[0].ID

	signal(t, follower, syscall.SIGSTOP)
	_, before := storetest.Changes(t, etcd.Endpoints(), 0)
	if expired := storetest.ExpireLeader(t, etcd.Endpoints(), store.DefaultPrefix, "scheduler"); expired != "http://"+leader.addr {
		t.Fatalf("expired the lease of %s, want the leader's", expired)
	}
	deposed := time.Now()
	if err := cluster.FailTask(cluster.Frameworks()[0], failed, "failed after the leader was deposed"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the old leader to step down", func() (bool, string) {
		var v leaderView
		getJSON(t, "http://"+leader.addr+"/v1/leader", &v)
		return !v.Self, fmt.Sprintf("%+v", v)
	})
	steppedDown := time.Since(deposed)
	changes, _ := storetest.Changes(t, etcd.Endpoints(), before)
	signal(t, follower, syscall.SIGCONT)
	t.Logf("the old leader stepped down %s after its lease ended; changes in etcd meanwhile: %q", steppedDown.Round(time.Millisecond), changes)
	for _, c := range changes {
		if !strings.Contains(c, " /bcs/election/") {
			t.Errorf("the deposed leader wrote: %s", c)
		}
	}
	var ended []byte
	eventually(t, "the old leader to log the end of its term", func() (bool, string) {
		log, _ := os.ReadFile(filepath.Join(dir, map[*replica]string{a: "a", b: "b"}[leader]+".log"))
		ended = regexp.MustCompile(`.*leadership term ended.*`).Find(log)
		return ended != nil, string(log)
	})
	t.Logf("old leader: %s", bytes.TrimSpace(ended))

	// The new leader leads on; the old one follows it and redirects.
	eventually(t, "the old leader to follow the new one", func() (bool, string) {
		var old, current leaderView
		getJSON(t, "http://"+leader.addr+"/v1/leader", &old)
		getJSON(t, "http://"+follower.addr+"/v1/leader", &current)
		return current.Self && old.Leader == "http://"+follower.addr, fmt.Sprintf("old %+v, new %+v", old, current)
	})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Post("http://"+leader.addr+"/v1/apps", "application/json", strings.NewReader(app))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("a write to the old leader: %d, want 307 to the new one", resp.StatusCode)
	}
	if after := runningIDs(t, follower.addr); slices.Contains(after, failedGroup) {
		t.Errorf("the failed task group %s still counts as running: %v", failedGroup, after)
	}
}

func signal(t *testing.T, r *replica, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}
