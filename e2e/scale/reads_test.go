package scale_test

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reads at fleet size: the shape's applications all running (plain, so
// they launch fastest), then each read below sent readSamples times (see
// readBudget), one at a time, by one client. It reports, per read, the
// latency's median and 99th percentile:
//
//	agents-p50-ms, agents-p99-ms     GET /v1/agents: every agent with the instances on it
//	agentpage-p50-ms, -p99-ms        GET /v1/agents?limit=100: a console's page of them
//	summary-p50-ms, summary-p99-ms   GET /v1/apps/bench/app-000?summary=true
//	page-p50-ms, page-p99-ms         GET /v1/apps/bench/app-000/instances?limit=500
//
// and s-to-running and running as BenchmarkRunning does, for the launch
// before (a capped launch is read all the same), and read-heap-KiB/task,
// what bcs-scheduler's heap holds after the reads more than before them
// (what they keep, as the agents' shares kept in the read view).
func BenchmarkReads10kOn100Agents(b *testing.B) {
	benchmarkReads(b, shape{agents: 100, apps: 10, instances: 1000, placement: plain})
}

func BenchmarkReads100kOn5kAgents(b *testing.B) {
	benchmarkReads(b, shape{agents: 5000, apps: 100, instances: 1000, placement: plain})
}

// Each read is sent readSamples times, or fewer once readBudget passed
// (at least minReadSamples times): a read taking seconds would otherwise
// hold the benchmark for many minutes.
const (
	readSamples    = 200
	minReadSamples = 20
	readBudget     = time.Minute
)

// reads are the reads measured, by the name of their metrics.
var reads = []struct{ name, path string }{
	{"agents", "/v1/agents"},
	{"agentpage", "/v1/agents?limit=100"},
	{"summary", "/v1/apps/bench/" + appName(0) + "?summary=true"},
	{"page", "/v1/apps/bench/" + appName(0) + "/instances?limit=500"},
}

func benchmarkReads(b *testing.B, sh shape) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sys := startSystem(b, sh)
		res := sys.run(b, *capFlag, appManifest)
		if res.capped {
			b.Logf("capped at %v: %d of %d instances Running in the API; reading all the same", res.elapsed.Round(time.Second), res.running, sh.apps*sh.instances)
		}
		b.ReportMetric(res.elapsed.Seconds(), "s-to-running")
		b.ReportMetric(float64(res.running), "running")
		unread := sys.measure(b)
		profiled := sys.startProfile(b)
		b.StartTimer()
		for _, rd := range reads {
			var took []time.Duration
			for start := time.Now(); len(took) < readSamples && (len(took) < minReadSamples || time.Since(start) < readBudget); {
				start := time.Now()
				if code, body := sys.call(http.MethodGet, rd.path, nil); code != http.StatusOK {
					b.Fatalf("GET %s: %d %.200s", rd.path, code, body)
				}
				took = append(took, time.Since(start))
			}
			b.ReportMetric(quantileMs(took, 0.5), rd.name+"-p50-ms")
			b.ReportMetric(quantileMs(took, 0.99), rd.name+"-p99-ms")
		}
		b.StopTimer()
		if err := <-profiled; err != nil {
			b.Error(err)
		}
		read := sys.measure(b)
		b.ReportMetric(float64(read.heap-unread.heap)/1024/float64(sh.apps*sh.instances), "read-heap-KiB/task")
		sys.stop()
	}
}

// startProfile profiles bcs-scheduler over -schedprofile-time from now
// when -schedprofile is set; the channel answers once it is written.
func (sys *system) startProfile(b *testing.B) <-chan error {
	profiled := make(chan error, 1)
	if *profileFlag == "" {
		profiled <- nil
		return profiled
	}
	go func() { profiled <- sys.profile(*profileFlag, *profileTime) }()
	return profiled
}

// quantileMs is the q-quantile of took, in milliseconds.
func quantileMs(took []time.Duration, q float64) float64 {
	slices.Sort(took)
	i := min(len(took)-1, int(q*float64(len(took))))
	return float64(took[i].Microseconds()) / 1000
}

// pollers is how many clients poll while BenchmarkPolledLaunch launches,
// and pollEvery how often each reads the full view of every application.
const (
	pollers   = 20
	pollEvery = 5 * time.Second
)

// A launch watched: the shape's applications launched as
// BenchmarkRunning does, quiet (no reader) and polled (20 clients each
// reading the full view of every application, instances and all, every
// 5 s, as dashboards do). The polled launch should be at most 10 %
// slower. It reports what BenchmarkRunning does, polls, the full views
// the clients read, and etcd-reads, the reads bcs-scheduler served from
// etcd because its read view had not caught up in time.
func BenchmarkPolledLaunch10kOn100Agents(b *testing.B) {
	benchmarkPolledLaunch(b, shape{agents: 100, apps: 10, instances: 1000, placement: plain})
}

func BenchmarkPolledLaunch100kOn5kAgents(b *testing.B) {
	benchmarkPolledLaunch(b, shape{agents: 5000, apps: 100, instances: 1000, placement: plain})
}

func benchmarkPolledLaunch(b *testing.B, sh shape) {
	for _, polled := range []bool{false, true} {
		b.Run(map[bool]string{false: "quiet", true: "polled"}[polled], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sys := startSystem(b, sh)
				before := sys.measure(b)
				profiled := sys.startProfile(b)
				stop := func() int { return 0 }
				if polled {
					stop = sys.poll(b, pollers, pollEvery)
				}
				b.StartTimer()
				res := sys.run(b, *capFlag, appManifest)
				b.StopTimer()
				b.ReportMetric(float64(stop()), "polls")
				b.ReportMetric(sys.etcdReads(b), "etcd-reads")
				if err := <-profiled; err != nil {
					b.Error(err)
				}
				after := sys.measure(b)
				sys.stop()
				report(b, sh, res, before, after)
			}
		})
	}
}

// poll starts clients, each reading the full view of every application
// of the shape once per every (a pass that takes longer is followed at
// once by the next); stop ends them and returns the views read. Views
// of applications not posted yet answer 404, and count too.
func (sys *system) poll(b *testing.B, clients int, every time.Duration) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	reads := 0
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				pass := time.Now()
				for i := range sys.shape.apps {
					select {
					case <-done:
						return
					default:
					}
					code, body := sys.call(http.MethodGet, fmt.Sprintf("/v1/apps/bench/%s", appName(i)), nil)
					if code != http.StatusOK && code != http.StatusNotFound {
						fmt.Fprintf(os.Stderr, "poll GET %s: %d %.200s\n", appName(i), code, body)
					}
					mu.Lock()
					reads++
					mu.Unlock()
				}
				select {
				case <-done:
					return
				case <-time.After(every - time.Since(pass)):
				}
			}
		}()
	}
	return func() int {
		close(done)
		wg.Wait()
		return reads
	}
}

// etcdReads is bcs-scheduler's bcs_api_reads_total{from="etcd"}.
func (sys *system) etcdReads(b *testing.B) float64 {
	code, metrics := sys.call(http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		b.Fatalf("GET /metrics: %d %s", code, metrics)
	}
	for line := range strings.Lines(string(metrics)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `bcs_api_reads_total{from="etcd"} `); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}
