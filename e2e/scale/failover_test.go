package scale_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The failover shapes: the leader is killed with the whole shape
// Running, then the benchmark writes through the replica that leads next.
func BenchmarkFailover10kOn100Agents(b *testing.B) {
	benchmarkFailover(b, shape{agents: 100, apps: 10, instances: 1000})
}

func BenchmarkFailover100kOn5kAgents(b *testing.B) {
	benchmarkFailover(b, shape{agents: 5000, apps: 100, instances: 1000})
}

// benchmarkFailover runs the shape until every instance is Running (untimed),
// kills bcs-scheduler, the leader, with SIGKILL and measures how soon the
// next leader takes writes, in two modes:
//
//	restart   the killed replica is started again, with its flags and data directory
//	standby   a second replica stood by from the start; nothing is restarted
//
// It reports:
//
//	s-to-write        seconds from the kill until the POST of a new application was accepted
//	s-to-new-running  seconds from the kill until the API showed all its instances in TASK_RUNNING
//	relaunched        tasks the master launched after the kill other than the new application's (must be 0)
//	kills             KILL calls the master received after the kill (must be 0)
//	rss-MiB           the new leader's resident memory once the new application runs
//
// -schedprofile saves a CPU profile of the new leader over -schedprofile-time
// from the kill on (from its start in restart mode).
func benchmarkFailover(b *testing.B, sh shape) {
	for _, mode := range []string{"restart", "standby"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				failover(b, sh, mode)
			}
		})
	}
}

// newApp is the application written after the kill: the index after the
// shape's, ten instances.
func newApp(sh shape) (name string, instances int, manifestJSON []byte) {
	small := shape{agents: sh.agents, apps: 1, instances: 10}
	return appName(sh.apps), small.instances, manifest(small, sh.apps)
}

func failover(b *testing.B, sh shape, mode string) {
	sys := startSystem(b, sh)
	var standby *exec.Cmd
	var standbyAPI, standbyDebug string
	if mode == "standby" {
		standbyAPI, standbyDebug = freeAddr(b), freeAddr(b)
		standby = sys.startReplica(b, standbyAPI, standbyDebug, filepath.Join(b.TempDir(), "standby"))
	}
	if res := sys.run(b, *capFlag, appManifest); res.capped {
		b.Fatalf("the shape did not run within -cap: %d of %d Running", res.running, sh.apps*sh.instances)
	}
	before := sys.cluster.Stats()
	if err := sys.scheduler.Process.Kill(); err != nil {
		b.Fatal(err)
	}
	killed := time.Now()
	_ = sys.scheduler.Wait()
	if mode == "restart" {
		sys.scheduler = sys.startReplica(b, "", "", "")
	} else {
		sys.scheduler, sys.api, sys.debug = standby, "http://"+standbyAPI, "http://"+standbyDebug
	}
	profiled := make(chan error, 1)
	if *profileFlag != "" {
		go func() { profiled <- sys.profileWhenUp(*profileFlag, *profileTime) }()
	} else {
		profiled <- nil
	}
	b.StartTimer()
	name, instances, body := newApp(sh)
	for {
		code, resp := sys.call("POST", "/v1/apps", body)
		if code == http.StatusCreated {
			break
		}
		if time.Since(killed) > *capFlag {
			b.Fatalf("no write accepted within -cap after the kill: last %d %s", code, resp)
		}
		time.Sleep(100 * time.Millisecond)
	}
	toWrite := time.Since(killed)
	for sys.runningInstances(b, name) < instances {
		if time.Since(killed) > *capFlag {
			b.Fatalf("%s not Running within -cap after the kill", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	toRunning := time.Since(killed)
	b.StopTimer()
	after := sys.cluster.Stats()
	rss := residentBytes(b, sys.scheduler.Process.Pid)
	if err := <-profiled; err != nil {
		b.Error(err)
	}
	sys.stop()
	b.ReportMetric(toWrite.Seconds(), "s-to-write")
	b.ReportMetric(toRunning.Seconds(), "s-to-new-running")
	b.ReportMetric(float64(after.TasksLaunched-before.TasksLaunched-int64(instances)), "relaunched")
	b.ReportMetric(float64(after.KillsReceived-before.KillsReceived), "kills")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
}

// startReplica starts another bcs-scheduler with the flags of the first,
// on its own --listen, --debug-addr and --data-dir where given (the first's
// where empty), and waits until its API
// answers at all: a standby's /healthz is not OK.
func (sys *system) startReplica(b *testing.B, listen, debug, dataDir string) *exec.Cmd {
	b.Helper()
	args := append([]string(nil), sys.scheduler.Args[1:]...)
	for flagName, value := range map[string]string{"--listen": listen, "--debug-addr": debug, "--data-dir": dataDir} {
		if value == "" {
			continue
		}
		for j := range args[:len(args)-1] {
			if args[j] == flagName {
				args[j+1] = value
			}
		}
	}
	if dataDir != "" {
		copyDataDir(b, flagValue(sys.scheduler.Args, "--data-dir"), dataDir)
	}
	cmd := exec.Command(sys.scheduler.Path, args...)
	cmd.Stdout, cmd.Stderr = sys.scheduler.Stdout, sys.scheduler.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	})
	health := "http://" + flagValue(args, "--listen") + "/healthz"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if code, _ := sys.get(health); code != 0 {
			return cmd
		}
		if time.Now().After(deadline) {
			b.Fatal("the bcs-scheduler replica did not answer within a minute")
		}
	}
}

// copyDataDir gives a replica the files of another's data directory, as
// replicas share them in production: the admin token and the sealing key.
func copyDataDir(b *testing.B, from, to string) {
	b.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

func flagValue(args []string, name string) string {
	for j := range args[:len(args)-1] {
		if args[j] == name {
			return args[j+1]
		}
	}
	return ""
}

// profileWhenUp waits for bcs-scheduler's debug address, then profiles it
// over d.
func (sys *system) profileWhenUp(path string, d time.Duration) error {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if code, _ := sys.get(sys.debug + "/debug/pprof/cmdline"); code == http.StatusOK {
			return sys.profile(path, d)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bcs-scheduler's debug address %s did not answer within a minute", sys.debug)
		}
	}
}
