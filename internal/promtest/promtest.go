package promtest

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
)

// Binary is the Prometheus the tests run.
const Binary = "/usr/bin/prometheus"

// Serve serves metrics as an exporter until t ends and returns its
// host:port.
func Serve(t testing.TB, metrics *prometheus.Registry) string {
	t.Helper()
	exporter := httptest.NewServer(promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	t.Cleanup(exporter.Close)
	return strings.TrimPrefix(exporter.URL, "http://")
}

// Start runs Prometheus scraping targets (host:port) as job every second
// until t ends and returns its URL. Scrapes are real time: callers wait until
// what they query is there. Its log is shown when t failed.
func Start(t testing.TB, job string, targets ...string) string {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("%s: %v (scripts/test-deps installs Debian's prometheus)", Binary, err)
	}
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, target := range targets {
		quoted[i] = fmt.Sprintf("%q", target)
	}
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: [%s]\n",
		job, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			if len(log) > 2000 {
				log = log[len(log)-2000:]
			}
			t.Logf("prometheus.log (last 2000 bytes):\n%s", log)
		}
	})
	return "http://" + addr
}

// Await queries Prometheus at address until the answer to query
// satisfies ok, for at most a minute, and returns that answer.
func Await(t testing.TB, address, query string, ok func(model.Vector) bool) model.Vector {
	t.Helper()
	client, err := promapi.NewClient(promapi.Config{Address: address})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		got, _, _, err := promv1.NewAPI(client).Query(ctx, query, time.Time{})
		cancel()
		if vec, isVector := got.(model.Vector); err == nil && isVector && ok(vec) {
			return vec
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not as wanted after a minute (last: %v, %v)", query, got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
