package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// startStandby starts a second bcs-scheduler replica of the system (same
// flags, same data directory: the secret key and the files agents fetch;
// the store must be an external etcd) and returns its API URL.
func (s *system) startStandby() string {
	s.t.Helper()
	api := fmt.Sprintf("http://127.0.0.1:%d", freePort(s.t))
	s.standbys = append(s.standbys, s.spawnScheduler("bcs-scheduler-standby", api))
	return api
}

// startReplicas starts a system of two bcs-scheduler replicas sharing the
// external etcd at etcd and waits until one leads; s.api is the leader's.
func startReplicas(t *testing.T, etcd string, args ...string) (s *system, leader, standby replica) {
	t.Helper()
	s = startSystem(t, append([]string{"--etcd-endpoints", etcd}, args...)...)
	a := replica{api: s.api, log: "bcs-scheduler", process: s.scheduler.Process}
	b := replica{api: s.startStandby(), log: "bcs-scheduler-standby"}
	b.process = s.standbys[0].Process
	s.eventuallyWithin(10*time.Second, "no replica leads", func() (bool, string) {
		la, selfA, errA := s.leaderOf(a.api)
		lb, selfB, errB := s.leaderOf(b.api)
		switch {
		case selfA && lb == a.api:
			leader, standby = a, b
		case selfB && la == b.api:
			leader, standby = b, a
		}
		return leader.api != "", fmt.Sprintf("a: %s %v %v; b: %s %v %v", la, selfA, errA, lb, selfB, errB)
	})
	s.api = leader.api
	return s, leader, standby
}

// embeddedEtcd is an etcd for the replicas of one test, in the test's
// process.
func embeddedEtcd(t *testing.T) *store.Embedded {
	t.Helper()
	etcd, err := store.StartEmbedded(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	return etcd
}

// leaderOf is what GET /v1/leader of the replica at api says (the
// replicas share the data directory, so the admin token).
func (s *system) leaderOf(api string) (leader string, self bool, err error) {
	req, err := http.NewRequest("GET", api+"/v1/leader", nil)
	if err != nil {
		return "", false, err
	}
	s.authorize(req)
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v struct {
		Leader string `json:"leader"`
		Self   bool   `json:"self"`
	}
	if err := json.Unmarshal(body, &v); resp.StatusCode != 200 || err != nil {
		return "", false, fmt.Errorf("GET /v1/leader: %d %s", resp.StatusCode, body)
	}
	return v.Leader, v.Self, nil
}

// A frozen leader is fenced. Two real bcs-scheduler replicas
// share one etcd (5s sessions). The leader is frozen with SIGSTOP and an
// instance's process killed meanwhile, so the TASK_FAILED update waits in
// its Mesos stream; the standby takes over past the TTL and relaunches the
// instance. Then the new leader is frozen briefly (shorter than its TTL:
// it still leads and cannot write) and the old one resumed with SIGCONT:
// until it has stepped down, etcd records no change but under election/.
// Second round, the fence itself: the old leader, now the standby, is
// frozen briefly; the new leader's lease is revoked in etcd behind its
// back and at once a user scales the application 3→4 through its API.
// The user's write lands (the API's writes are not fenced); the driver's
// write of the new instance is refused, the leader steps down, and etcd
// records nothing else but the election. The standby, resumed, leads and
// carries out the scale.
func TestFrozenLeaderIsFenced(t *testing.T) {
	etcd := embeddedEtcd(t)
	s, leader, standby := startReplicas(t, etcd.Endpoints()[0])
	if code, body := s.call("POST", "/v1/apps", s.manifest("process.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	instances := s.running("demo", "gamesvr", 3)

	freeze(t, leader.process)
	frozen := time.Now()
	if err := syscall.Kill(pidOf(t, s.runPath(instances[0].Host, "demo.gamesvr.0", "gamesvr.pid")), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.api = standby.api
	s.eventuallyWithin(15*time.Second, "the standby did not take over", func() (bool, string) {
		l, self, err := s.leaderOf(standby.api)
		return self, fmt.Sprintf("%s %v %v", l, self, err)
	})
	t.Logf("the standby took over %s after the leader froze", time.Since(frozen).Round(time.Millisecond))
	s.relaunchedOnce(0)
	s.deposedWritesNothing(etcd.Endpoints(), leader, standby, nil, func() { resume(t, leader.process) })
	leader, standby = standby, leader

	s.api = leader.api
	s.deposedWritesNothing(etcd.Endpoints(), leader, standby, []string{"PUT /bcs/apps/demo/gamesvr"}, func() {
		if expired := storetest.ExpireLeader(t, etcd.Endpoints(), store.DefaultPrefix, "scheduler"); expired != leader.api {
			t.Fatalf("expired the lease of %s, want the leader's, %s", expired, leader.api)
		}
		if code, body := s.call("POST", "/v1/apps/demo/gamesvr/scale", []byte(`{"instances":4}`)); code != 202 {
			t.Fatalf("scale: %d %s", code, body)
		}
	})
	s.api = standby.api
	s.eventuallyWithin(10*time.Second, "the standby did not take over, followed by the deposed leader", func() (bool, string) {
		l, self, err := s.leaderOf(standby.api)
		followed, _, _ := s.leaderOf(leader.api)
		return self && followed == standby.api, fmt.Sprintf("%s %v %v; the deposed follows %q", l, self, err, followed)
	})
	// UNIQUE hostname on three agents: the fourth instance waits.
	s.eventuallyWithin(10*time.Second, "the new leader did not carry out the scale", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		running := 0
		for _, i := range v.Status.Instances {
			if i.State == "TASK_RUNNING" {
				running++
			}
		}
		return len(v.Status.Instances) == 4 && running == 3, fmt.Sprintf("%s %q %+v", v.Status.State, v.Status.Message, v.Status.Instances)
	})
}

// replica is one bcs-scheduler of a system with several.
type replica struct {
	api     string
	log     string // its log is <log>.log in the system's directory
	process *os.Process
}

// relaunchedOnce waits, on the replica at s.api, until instance i has run
// again after one restart.
func (s *system) relaunchedOnce(i int) {
	s.t.Helper()
	s.eventuallyWithin(15*time.Second, fmt.Sprintf("instance %d was not relaunched", i), func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, inst := range v.Status.Instances {
			if inst.ID == i {
				return inst.Restarts == 1 && inst.State == "TASK_RUNNING", fmt.Sprintf("%+v", inst)
			}
		}
		return false, fmt.Sprintf("%+v", v.Status)
	})
}

// deposedWritesNothing freezes the standby (briefly: it keeps its etcd
// session and writes nothing), runs depose, which must leave the leader
// deposed without telling it, and waits until the deposed leader says it
// no longer leads; then it resumes the standby. etcd must have recorded
// no change meanwhile but under election/ and the users' writes depose
// made through the API (each with its audit entry), and the deposed
// leader's log must say its term ended.
func (s *system) deposedWritesNothing(etcd []string, deposed, standby replica, users []string, depose func()) {
	t := s.t
	t.Helper()
	freeze(t, standby.process)
	_, before := storetest.Changes(t, etcd, 0)
	depose()
	start := time.Now()
	s.eventuallyWithin(3*time.Second, "the deposed leader did not step down", func() (bool, string) {
		l, self, err := s.leaderOf(deposed.api)
		return err == nil && !self, fmt.Sprintf("%s %v %v", l, self, err)
	})
	steppedDown := time.Since(start)
	changes, _ := storetest.Changes(t, etcd, before)
	resume(t, standby.process)
	t.Logf("%s stepped down after %s; changes in etcd meanwhile: %q", deposed.log, steppedDown.Round(time.Millisecond), changes)
	var others []string
	audited := 0
	for _, c := range changes {
		switch {
		case strings.Contains(c, " /bcs/election/"):
		case strings.HasPrefix(c, "PUT /bcs/audit/"):
			audited++ // the API's record of a user's write
		default:
			others = append(others, c)
		}
	}
	if !slices.Equal(others, users) || audited != len(users) {
		t.Errorf("changes besides the election: %q and %d audit entries, want only the users' %q and one entry each: the deposed leader wrote", others, audited, users)
	}
	var ended []byte
	s.eventuallyWithin(5*time.Second, "the deposed leader's log does not say its term ended", func() (bool, string) {
		log, _ := os.ReadFile(filepath.Join(s.dir, deposed.log+".log"))
		ended = regexp.MustCompile(`.*leadership term ended.*`).Find(log)
		return ended != nil, string(tail(log, 2000))
	})
	t.Logf("%s: %s", deposed.log, bytes.TrimSpace(ended))
}

func freeze(t *testing.T, p *os.Process) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

func resume(t *testing.T, p *os.Process) {
	t.Helper()
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
