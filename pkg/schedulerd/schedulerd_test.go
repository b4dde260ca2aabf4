package schedulerd_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/internal/testpki"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/hook"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/schedulerd"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// A replica is this test binary run again as a bcs-scheduler process
// (see TestMain), so that a test can kill it with SIGKILL: no resignation,
// leadership passes only when its etcd session expires.
type replica struct {
	addr string
	cmd  *exec.Cmd
}

func TestMain(m *testing.M) {
	if spec := os.Getenv("BCS_TEST_REPLICA"); spec != "" {
		var o struct {
			Etcd, Master, DataDir, KeyFile, TokenFile, AdmissionPolicy string
			ElectionTTL                                                time.Duration
			LogFile                                                    string // default: discard
		}
		if err := json.Unmarshal([]byte(spec), &o); err != nil {
			panic(err)
		}
		log := io.Discard
		if o.LogFile != "" {
			f, err := os.Create(o.LogFile)
			if err != nil {
				panic(err)
			}
			log = f
		}
		err := schedulerd.Run(context.Background(), schedulerd.Options{
			Listen: "127.0.0.1:0", DataDir: o.DataDir, EtcdEndpoints: []string{o.Etcd}, Masters: []string{o.Master}, SecretKeyFile: o.KeyFile,
			TokenFile: o.TokenFile, AdmissionPolicy: o.AdmissionPolicy,
			ProcessExecutorURI: "file:///opt/bcs/bcs-process-executor",
			TickInterval:       50 * time.Millisecond, ElectionTTL: cmp.Or(o.ElectionTTL, time.Second),
			Logger: slog.New(slog.NewTextHandler(log, nil)),
			Ready:  func(addr string) { fmt.Println("READY", addr) },
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// adminToken is the replicas' admin: replicas sharing an etcd share
// their token file.
const adminToken = "replica-admin-token-5e1f0c"

// client calls the replicas' API as the admin.
var client = &http.Client{Transport: withToken{}}

// noRedirect is client showing a redirect instead of following it.
var noRedirect = &http.Client{Transport: withToken{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type withToken struct{}

func (withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+adminToken)
	return http.DefaultTransport.RoundTrip(r)
}

// tokenFile writes the token file of the admin above.
func tokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte(adminToken+",admin,admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// egressPolicyFile writes an admission policy that allows every
// namespace's hooks to reach allowed (test servers listen on loopback,
// which the egress policy refuses otherwise).
func egressPolicyFile(t *testing.T, allowed string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.json")
	policy := fmt.Sprintf(`{"default": {"users": ["*"], "egress": [%q]}}`, allowed)
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startReplicaWith starts a replica of spec (see TestMain).
func startReplicaWith(t *testing.T, spec map[string]any) *replica {
	t.Helper()
	if spec["TokenFile"] == nil {
		spec["TokenFile"] = tokenFile(t)
	}
	specJSON, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BCS_TEST_REPLICA="+string(specJSON))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd}
	t.Cleanup(r.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "READY ") {
		t.Fatalf("replica did not start: %q %v", line, err)
	}
	r.addr = strings.TrimSpace(strings.TrimPrefix(line, "READY "))
	return r
}

// kill ends the replica with SIGKILL, as a crash would.
func (r *replica) kill() {
	if r.cmd.ProcessState == nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		_ = json.NewDecoder(resp.Body).Decode(v)
	}
	return resp.StatusCode
}

type leaderView struct {
	Leader string `json:"leader"`
	Self   bool   `json:"self"`
}

type appView struct {
	Status struct {
		State     string `json:"state"`
		Instances []struct {
			ID          int    `json:"id"`
			TaskGroupID string `json:"taskGroupID"`
			State       string `json:"state"`
			Tasks       []struct {
				ID string `json:"id"`
			} `json:"tasks"`
		} `json:"instances"`
	} `json:"status"`
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, what, cond)
}

func eventuallyWithin(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

const app = `{"apiVersion":"v4","kind":"process","metadata":{"name":"game","namespace":"ns-a"},
 "constraint":{"intersectionItem":[{"unionData":[{"name":"hostname","operate":"UNIQUE"}]}]},
 "spec":{"instance":3,"template":{"spec":{"processes":[{"procName":"game",
  "workPath":"${work_base_dir}/${namespace}.${processname}.${instanceid}",
  "pidFile":"${run_base_dir}/${namespace}.${processname}.${instanceid}/pid",
  "startCmd":"./start.sh","resources":{"limits":{"cpu":"0.5","memory":"64"}}}]}}}}`

// runningIDs returns the task group IDs once all three instances run.
func runningIDs(t *testing.T, addr string) []string {
	t.Helper()
	var ids []string
	eventually(t, "3 running instances", func() (bool, string) {
		var v appView
		getJSON(t, "http://"+addr+"/v1/apps/ns-a/game", &v)
		ids = ids[:0]
		for _, i := range v.Status.Instances {
			if i.State == "TASK_RUNNING" {
				ids = append(ids, i.TaskGroupID)
			}
		}
		return len(ids) == 3 && v.Status.State == "Running", fmt.Sprintf("%+v", v.Status)
	})
	return ids
}

// High availability: two replicas on one etcd elect one leader;
// the follower serves reads and redirects writes to it; when the leader
// is killed (SIGKILL: no resignation) the follower takes over within
// seconds of its etcd session expiring, and no instance is lost or
// duplicated. A hook run under way goes on on the new leader, its
// measurements kept: hook runs outlive the replica that started them.
func TestStandbyTakesOver(t *testing.T) {
	etcd, cluster := startEtcdAndCluster(t)
	keyFile := filepath.Join(t.TempDir(), "secret.key")
	hookServer := newCountingServer(t)
	policy := egressPolicyFile(t, strings.TrimPrefix(hookServer.URL, "http://"))
	// Each replica has a data directory of its own, and the sealing key
	// file, token file and admission policy every replica must share.
	replica := func() *replica {
		return startReplicaWith(t, map[string]any{"Etcd": etcd.Endpoints()[0], "Master": cluster.MasterURL(), "DataDir": t.TempDir(),
			"KeyFile": keyFile, "AdmissionPolicy": policy})
	}
	a, b := replica(), replica()
	leader, follower := whoLeads(t, a, b)

	// A write to the follower is redirected to the leader (307).
	resp, err := noRedirect.Post("http://"+follower.addr+"/v1/apps", "application/json", bytes.NewBufferString(app))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "http://"+leader.addr+"/v1/apps" {
		t.Fatalf("follower answered %d %q, want 307 to the leader", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = client.Post("http://"+leader.addr+"/v1/apps", "application/json", bytes.NewBufferString(app))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	before := runningIDs(t, follower.addr) // reads are served by the follower
	measuredBefore := startHookRun(t, hookServer, leader.addr, follower.addr)

	leader.kill()
	eventually(t, "the follower to lead", func() (bool, string) {
		var v leaderView
		getJSON(t, "http://"+follower.addr+"/v1/leader", &v)
		return v.Self, fmt.Sprintf("%+v", v)
	})
	time.Sleep(500 * time.Millisecond) // reconcile and a few offer rounds
	after := runningIDs(t, follower.addr)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("instances changed across the takeover: %v → %v", before, after)
	}
	if n := len(cluster.Frameworks()); n != 1 {
		t.Errorf("%d frameworks, want the one the new leader failed over to", n)
	}
	// The hook run goes on on the new leader, its measurements kept.
	calls := hookServer.calls.Load()
	eventually(t, "the hook run measured by the new leader", func() (bool, string) {
		run := getHookRun(t, follower.addr)
		r := run.Status.MetricResults[0]
		kept := len(r.Measurements) > 0 && r.Measurements[0] == measuredBefore
		return kept && hookServer.calls.Load() > calls && r.Count > 1, fmt.Sprintf("%+v", run.Status)
	})
}

// startEtcdAndCluster starts an embedded etcd and a simulated dev
// cluster, both stopped when t ends.
func startEtcdAndCluster(t *testing.T) (*store.Embedded, *devcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	etcd, err := store.StartEmbedded(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	cluster, err := devcluster.Start(ctx, devcluster.Config{
		ListenAddr: "127.0.0.1:0", WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		AllocationInterval: devcluster.Duration(50 * time.Millisecond), DefaultRefuse: devcluster.Duration(100 * time.Millisecond),
		SimulatedStartDelay: devcluster.Duration(20 * time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	return etcd, cluster
}

// whoLeads waits until one of a and b leads and the other knows it.
func whoLeads(t *testing.T, a, b *replica) (leader, follower *replica) {
	t.Helper()
	eventually(t, "a leader", func() (bool, string) {
		var va, vb leaderView
		getJSON(t, "http://"+a.addr+"/v1/leader", &va)
		getJSON(t, "http://"+b.addr+"/v1/leader", &vb)
		switch {
		case va.Self && vb.Leader == "http://"+a.addr:
			leader, follower = a, b
		case vb.Self && va.Leader == "http://"+b.addr:
			leader, follower = b, a
		}
		return leader != nil, fmt.Sprintf("a=%+v b=%+v", va, vb)
	})
	return leader, follower
}

type countingServer struct {
	*httptest.Server
	calls atomic.Int64
}

// newCountingServer is the web hook of startHookRun.
func newCountingServer(t *testing.T) *countingServer {
	srv := &countingServer{}
	srv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		srv.calls.Add(1)
		io.WriteString(w, `{"name":"bryan","male":"yes","age":12}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startHookRun starts a hook run through the leader's API that measures
// srv every second until stopped, waits (reading the follower) for its
// first measurement, and returns it.
func startHookRun(t *testing.T, srv *countingServer, leader, follower string) hook.Measurement {
	t.Helper()
	template := fmt.Sprintf(`{"apiVersion":"v4","kind":"hooktemplate","metadata":{"name":"age","namespace":"ns-a"},
	 "spec":{"metrics":[{"name":"webtest","interval":"1s","successCondition":"asInt(result) < 30",
	  "provider":{"web":{"url":%q,"jsonPath":"{$.age}"}}}]}}`, srv.URL)
	run := `{"kind":"hookrun","metadata":{"name":"age-check","namespace":"ns-a"},"spec":{"templateName":"age"}}`
	post(t, "http://"+leader+"/v1/hooktemplates", template)
	post(t, "http://"+leader+"/v1/hookruns", run)
	var first hook.Measurement
	eventually(t, "a hook measurement", func() (bool, string) {
		run := getHookRun(t, follower)
		if len(run.Status.MetricResults) == 0 || len(run.Status.MetricResults[0].Measurements) == 0 {
			return false, fmt.Sprintf("%+v", run.Status)
		}
		first = run.Status.MetricResults[0].Measurements[0]
		return true, ""
	})
	return first
}

func post(t *testing.T, url, body string) {
	t.Helper()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, msg)
	}
}

func getHookRun(t *testing.T, addr string) registry.HookRun {
	t.Helper()
	var run registry.HookRun
	if code := getJSON(t, "http://"+addr+"/v1/hookruns/ns-a/age-check", &run); code != http.StatusOK {
		t.Fatalf("GET hook run: %d", code)
	}
	return run
}

// Paths reach agents elsewhere, so a relative work or run base
// directory is refused naming its flag, before anything starts; an
// unknown Mesos encoding, a negative depends GC delay and a bad secret
// backend or Vault flag likewise.
func TestRunRefusesBadPathsAndEncodings(t *testing.T) {
	cases := []struct {
		name string
		edit func(*schedulerd.Options)
		want string
	}{
		{"relative work base", func(o *schedulerd.Options) { o.Scheduler.WorkBaseDir = "bcs-data/work" }, `--work-base-dir "bcs-data/work": must be an absolute path`},
		{"relative run base", func(o *schedulerd.Options) { o.Scheduler.RunBaseDir = "run" }, `--run-base-dir "run": must be an absolute path`},
		{"unknown encoding", func(o *schedulerd.Options) { o.MesosEncoding = "xml" }, `encoding "xml": want protobuf or json`},
		{"negative GC delay", func(o *schedulerd.Options) { o.Scheduler.DependsGCDelay = -time.Minute }, `--depends-gc-delay -1m0s: must be positive`},
		{"negative launch budget", func(o *schedulerd.Options) { o.Scheduler.MaxLaunching = -1 }, `--max-launching -1: must be positive`},
		// The secret backend and its Vault flags.
		{"unknown secret backend", func(o *schedulerd.Options) { o.SecretBackend = "consul" }, `--secret-backend "consul": want etcd or vault`},
		{"vault without address", func(o *schedulerd.Options) { o.SecretBackend = "vault" }, `--vault-addr is required with --secret-backend vault`},
		{"vault without token file", func(o *schedulerd.Options) {
			o.SecretBackend, o.Vault.Addr = "vault", "http://127.0.0.1:8200"
		}, `--vault-token-file is required with --secret-backend vault`},
		{"vault token file missing", func(o *schedulerd.Options) {
			o.SecretBackend, o.Vault.Addr, o.Vault.TokenFile = "vault", "http://127.0.0.1:8200", "/nonexistent/token"
		}, `--vault-token-file: stat /nonexistent/token: no such file or directory`},
		{"vault flags without the backend", func(o *schedulerd.Options) { o.Vault.Addr = "http://127.0.0.1:8200" },
			`--vault-addr is set but --secret-backend is etcd: add --secret-backend vault`},
		// The API's credentials and TLS.
		{"token file missing", func(o *schedulerd.Options) { o.TokenFile = "/nonexistent/tokens.csv" }, `--token-file: stat /nonexistent/tokens.csv: no such file or directory`},
		{"token file with a bad line", func(o *schedulerd.Options) { o.TokenFile = writeFile(t, "tokens.csv", "short,alice,admin\n") },
			`tokens.csv: line 1: token shorter than 16 characters`},
		{"certificate without key", func(o *schedulerd.Options) { o.TLSCert = "/etc/cert.pem" }, `--tls-cert needs --tls-key`},
		{"client CA without TLS", func(o *schedulerd.Options) { o.ClientCA = "/etc/ca.pem" }, `--client-ca needs --tls-cert`},
		{"cert roles without client CA", func(o *schedulerd.Options) { o.CertRoles = "/etc/roles.csv" }, `--cert-roles needs --client-ca`},
		// Profiles show the process's memory: loopback only.
		{"debug address not on loopback", func(o *schedulerd.Options) { o.DebugAddr = "0.0.0.0:6060" },
			`--debug-addr "0.0.0.0:6060": profiles show the process's memory, so they are served on a loopback address only`},
		{"debug address without a port", func(o *schedulerd.Options) { o.DebugAddr = "127.0.0.1" }, `--debug-addr "127.0.0.1": want host:port`},
		{"unreadable certificate", func(o *schedulerd.Options) { o.TLSCert, o.TLSKey = "/nonexistent/c.pem", "/nonexistent/k.pem" }, `--tls-cert/--tls-key/--client-ca: open /nonexistent/c.pem`},
		// etcd's and Mesos' TLS and the framework's credential.
		{"etcd certificate without key", func(o *schedulerd.Options) {
			o.EtcdEndpoints, o.EtcdTLS.Cert = []string{"https://127.0.0.1:2379"}, "/etc/etcd.pem"
		}, `--etcd-cert needs --etcd-key`},
		{"etcd key without certificate", func(o *schedulerd.Options) {
			o.EtcdEndpoints, o.EtcdTLS.Key = []string{"https://127.0.0.1:2379"}, "/etc/etcd-key.pem"
		}, `--etcd-key needs --etcd-cert`},
		{"etcd TLS without endpoints", func(o *schedulerd.Options) { o.EtcdTLS.CACert = "/etc/ca.pem" },
			`--etcd-cacert, --etcd-cert and --etcd-key need --etcd-endpoints: the embedded etcd serves no TLS`},
		{"etcd TLS for an http:// endpoint", func(o *schedulerd.Options) {
			o.EtcdEndpoints, o.EtcdTLS.CACert = []string{"http://127.0.0.1:2379"}, "/etc/ca.pem"
		}, `--etcd-endpoints http://127.0.0.1:2379: --etcd-cacert, --etcd-cert and --etcd-key need https:// endpoints`},
		{"etcd CA file missing", func(o *schedulerd.Options) {
			o.EtcdEndpoints, o.EtcdTLS.CACert = []string{"https://127.0.0.1:2379"}, "/nonexistent/ca.pem"
		}, `--etcd-cacert/--etcd-cert/--etcd-key: open /nonexistent/ca.pem`},
		{"Mesos secret without principal", func(o *schedulerd.Options) { o.MesosSecretFile = "/etc/bcs/secret" }, `--mesos-secret-file needs --mesos-principal`},
		{"Mesos secret file missing", func(o *schedulerd.Options) { o.MesosPrincipal, o.MesosSecretFile = "bcs", "/nonexistent/secret" },
			`the secret of Mesos principal "bcs" (--mesos-secret-file): open /nonexistent/secret`},
		{"Mesos secret file empty", func(o *schedulerd.Options) { o.MesosPrincipal, o.MesosSecretFile = "bcs", writeFile(t, "secret", "\n") },
			`the secret of Mesos principal "bcs": --mesos-secret-file`},
		{"Mesos CA for http:// masters", func(o *schedulerd.Options) {
			o.Masters, o.MesosCACert = []string{"http://127.0.0.1:5050"}, testpki.NewCA(t, "ca").CertFile
		}, `--mesos-cacert needs https:// masters`},
		{"Mesos CA file without a certificate", func(o *schedulerd.Options) {
			o.Masters, o.MesosCACert = []string{"https://127.0.0.1:5050"}, writeFile(t, "ca.pem", "not PEM")
		}, `--mesos-cacert: /`},
		{"masters of both schemes", func(o *schedulerd.Options) { o.Masters = []string{"https://10.0.0.1:5050", "http://10.0.0.2:5050"} },
			`all masters are http:// or all https://`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := schedulerd.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0"}
			c.edit(&o)
			err := schedulerd.Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run: %v, want %q", err, c.want)
			}
		})
	}
}

// runInProcess runs bcs-scheduler in this process until the test stops
// it; it returns the API address, or Run's error if it fails to start.
func runInProcess(t *testing.T, o schedulerd.Options) (addr string, stop func(), err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	o.Listen, o.Ready = "127.0.0.1:0", func(addr string) { ready <- addr }
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TokenFile == "" {
		o.TokenFile = tokenFile(t)
	}
	done := make(chan error, 1)
	go func() { done <- schedulerd.Run(ctx, o) }()
	select {
	case addr := <-ready:
		stop := func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
		return addr, stop, nil
	case err := <-done:
		cancel()
		return "", nil, err
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("bcs-scheduler did not start within 30s")
		return "", nil, nil
	}
}

// One sealing key, shared by every replica, through the process: a
// secret stored with the data dir's key; a start with another key file is
// refused saying which file and what to do; `rotate-key` re-seals under a
// new key, after which the old key is refused and the new one reads the
// secret.
func TestRunSealingKeyAndRotation(t *testing.T) {
	cluster, err := devcluster.Start(context.Background(), devcluster.Config{ListenAddr: "127.0.0.1:0", WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	masters := []string{cluster.MasterURL()}
	dataDir, keys := t.TempDir(), t.TempDir()
	addr, stop, err := runInProcess(t, schedulerd.Options{Masters: masters, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "leading", func() (bool, string) {
		var v leaderView
		getJSON(t, "http://"+addr+"/v1/leader", &v)
		return v.Self, fmt.Sprintf("%+v", v)
	})
	secret := `{"apiVersion":"v4","kind":"secret","metadata":{"name":"db","namespace":"ns-a"},"datas":{"password":{"content":"aHVudGVyMg=="}}}`
	post(t, "http://"+addr+"/v1/secrets", secret)
	stop()

	otherKey := filepath.Join(keys, "other.key")
	if _, err := store.LoadOrCreateKey(otherKey); err != nil {
		t.Fatal(err)
	}
	_, _, err = runInProcess(t, schedulerd.Options{Masters: masters, DataDir: dataDir, SecretKeyFile: otherKey})
	if !errors.Is(err, store.ErrSealingKey) || !strings.Contains(err.Error(), otherKey) {
		t.Fatalf("start with another key file: %v, want %v naming %s", err, store.ErrSealingKey, otherKey)
	}

	newKey := filepath.Join(keys, "new.key")
	r, err := schedulerd.RotateKey(context.Background(), schedulerd.RotateKeyOptions{DataDir: dataDir, NewKeyFile: newKey})
	if err != nil {
		t.Fatalf("RotateKey: %v", err)
	}
	if r.Resealed != 1 {
		t.Errorf("rotation %+v, want the one secret re-sealed", r)
	}
	_, _, err = runInProcess(t, schedulerd.Options{Masters: masters, DataDir: dataDir})
	if !errors.Is(err, store.ErrSealingKey) {
		t.Fatalf("start with the old key after the rotation: %v, want %v", err, store.ErrSealingKey)
	}
	addr, stop, err = runInProcess(t, schedulerd.Options{Masters: masters, DataDir: dataDir, SecretKeyFile: newKey})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if code := getJSON(t, "http://"+addr+"/v1/secrets/ns-a/db", nil); code != http.StatusOK {
		t.Fatalf("GET the secret with the new key: %d", code)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Without a token file the first start makes an admin token in
// <data-dir>/admin.token (0600) and says where; the API wants it on all
// but the open routes, and the next start takes the same token.
func TestAdminTokenWithoutTokenFile(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	for start := range 2 {
		ctx, stop := context.WithCancel(context.Background())
		ready, done := make(chan string, 1), make(chan error, 1)
		go func() {
			done <- schedulerd.Run(ctx, schedulerd.Options{DataDir: dir, Listen: "127.0.0.1:0",
				Logger: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func(addr string) { ready <- addr }})
		}()
		var addr string
		select {
		case addr = <-ready:
		case err := <-done:
			t.Fatalf("Run: %v", err)
		}
		path := filepath.Join(dir, schedulerd.AdminTokenFile)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("start %d: admin token file %v, mode %v; want 0600", start, err, fi)
		}
		token, _ := os.ReadFile(path)
		for _, tc := range []struct {
			path, token string
			want        int
		}{
			{"/healthz", "", http.StatusOK},
			{"/v1/apps", "", http.StatusUnauthorized},
			{"/v1/apps", "wrong-token-0123456789", http.StatusUnauthorized},
			{"/v1/apps", strings.TrimSpace(string(token)), http.StatusOK},
		} {
			req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("start %d: GET %s with %q = %d, want %d", start, tc.path, tc.token, resp.StatusCode, tc.want)
			}
		}
		stop()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if n := strings.Count(logs.String(), "the API takes the admin token in "+filepath.Join(dir, "admin.token")); n != 2 {
		t.Errorf("%d log lines name the admin token file, want 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "created=true") || !strings.Contains(logs.String(), "created=false") {
		t.Errorf("the log does not say the first start made it and the second took it:\n%s", logs.String())
	}
}

// The token file is read again when it changes. A rotated
// token works at once and the old one is refused; a file edited into a
// mistake keeps the last good tokens and the log says why, without a
// token in it.
func TestTokenFileIsReadAgainWhenItChanges(t *testing.T) {
	const oldToken, newToken = "old-token-0123456789abcdef", "new-token-0123456789abcdef"
	path := writeFile(t, "tokens.csv", oldToken+",alice,admin\n")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logs := func() string { data, _ := os.ReadFile(logFile.Name()); return string(data) }
	addr, stop, err := runInProcess(t, schedulerd.Options{DataDir: t.TempDir(), TokenFile: path, Logger: slog.New(slog.NewTextHandler(logFile, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	status := func(token string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/apps", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rewrite := func(content string, age time.Duration) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(age) // a new modification time even on a coarse clock
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		content      string
		age          time.Duration
		oldOK, newOK bool
		logsAMistake bool
	}{
		{"", 0, true, false, false},
		{newToken + ",alice,admin\n", time.Second, false, true, false},
		{newToken + ",alice,chief\n" + oldToken + ",bob,admin\n", 2 * time.Second, false, true, true},
		{oldToken + ",bob,read-only\n", 3 * time.Second, true, false, true},
	} {
		if step.content != "" {
			rewrite(step.content, step.age)
		}
		if got := status(oldToken) == http.StatusOK; got != step.oldOK {
			t.Errorf("after writing %q: the old token works: %v, want %v", step.content, got, step.oldOK)
		}
		if got := status(newToken) == http.StatusOK; got != step.newOK {
			t.Errorf("after writing %q: the new token works: %v, want %v", step.content, got, step.newOK)
		}
		if got := strings.Contains(logs(), "--token-file: the changed file is not taken"); got != step.logsAMistake {
			t.Errorf("after writing %q: the log says the file was not taken: %v, want %v", step.content, got, step.logsAMistake)
		}
	}
	if out := logs(); !strings.Contains(out, `role \"chief\"`) || strings.Contains(out, oldToken) || strings.Contains(out, newToken) {
		t.Errorf("the log should say what is wrong with the file and show no token:\n%s", out)
	}
}

// --debug-addr serves Go's profiles on loopback while the
// scheduler runs, and nothing after it stopped.
func TestDebugAddrServesProfiles(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	debug := listener.Addr().String()
	listener.Close()
	_, stop, err := runInProcess(t, schedulerd.Options{DataDir: t.TempDir(), DebugAddr: debug})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("GET /debug/pprof/goroutine = %d %.200s", resp.StatusCode, body)
	}
	stop()
	if _, err := http.Get("http://" + debug + "/debug/pprof/"); err == nil {
		t.Error("profiles still served after the scheduler stopped")
	}
}
