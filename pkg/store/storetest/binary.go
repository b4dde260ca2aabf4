package storetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// EtcdBinary is the etcd executable StartEtcdBinary runs, as installed by
// the Debian package etcd-server.
const EtcdBinary = "/usr/bin/etcd"

// EtcdProcess is an etcd server started as a child process for a test.
// Stop and Restart take it down and bring it back on the same data
// directory and ports, as an operator's restart (or a crash) would.
type EtcdProcess struct {
	t        *testing.T
	bin      string
	args     []string
	endpoint string
	client   *tls.Config // how the readiness check connects
	cmd      *exec.Cmd   // nil while stopped
	exited   chan error
}

var _ Cluster = (*EtcdProcess)(nil)

// Endpoints are the client URLs of the process.
func (p *EtcdProcess) Endpoints() []string { return []string{p.endpoint} }

// StartEtcdBinary starts the etcd binary (EtcdBinary, or "etcd" from PATH)
// as a single-node cluster on free 127.0.0.1 ports in a temporary
// directory, waits until it serves, and stops it when the test ends. A
// missing binary fails the test: `make test` installs it.
func StartEtcdBinary(t *testing.T) *EtcdProcess {
	t.Helper()
	return startEtcdBinary(t, nil)
}

// EtcdTLS is what StartEtcdBinaryTLS's etcd serves clients with.
type EtcdTLS struct {
	// CertFile and KeyFile are the server's certificate and key
	// (--cert-file, --key-file).
	CertFile, KeyFile string
	// ClientCAFile signed the client certificates etcd accepts; it
	// refuses clients without one (--client-cert-auth
	// --trusted-ca-file).
	ClientCAFile string
	// Client is how the readiness check connects: a CA that verifies
	// the server and a client certificate.
	Client *tls.Config
}

// StartEtcdBinaryTLS is StartEtcdBinary with https:// client URLs served
// as tlsCfg says.
func StartEtcdBinaryTLS(t *testing.T, tlsCfg EtcdTLS) *EtcdProcess {
	t.Helper()
	return startEtcdBinary(t, &tlsCfg)
}

func startEtcdBinary(t *testing.T, tlsCfg *EtcdTLS) *EtcdProcess {
	t.Helper()
	bin := EtcdBinary
	if _, err := os.Stat(bin); err != nil {
		path, lookErr := exec.LookPath("etcd")
		if lookErr != nil {
			t.Fatalf("etcd binary not found at %s or in PATH: `make test` installs it (Debian package etcd-server; by hand: apt-get install -y etcd-server)", EtcdBinary)
		}
		bin = path
	}
	dir := t.TempDir()
	clientAddr, peerAddr := freeAddr(t), freeAddr(t)
	clientURL, peerURL := "http://"+clientAddr, "http://"+peerAddr
	var tlsArgs []string
	var client *tls.Config
	if tlsCfg != nil {
		clientURL, client = "https://"+clientAddr, tlsCfg.Client
		tlsArgs = []string{"--cert-file", tlsCfg.CertFile, "--key-file", tlsCfg.KeyFile,
			"--client-cert-auth", "--trusted-ca-file", tlsCfg.ClientCAFile}
	}
	p := &EtcdProcess{t: t, bin: bin, endpoint: clientURL, client: client, args: append([]string{
		"--name", "storetest",
		"--data-dir", dir,
		"--listen-client-urls", clientURL,
		"--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "storetest=" + peerURL,
		"--initial-cluster-token", "storetest",
		"--logger", "zap",
		"--log-outputs", "stderr",
		"--log-level", "error",
	}, tlsArgs...)}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.stop(syscall.SIGTERM, 10*time.Second)
		}
	})
	p.start()
	return p
}

// Stop ends the process with sig — SIGTERM as an operator stops etcd,
// SIGKILL as a crash — and waits until it exited.
func (p *EtcdProcess) Stop(sig syscall.Signal) {
	p.t.Helper()
	if p.cmd == nil {
		p.t.Fatal("etcd is not running")
	}
	p.stop(sig, 30*time.Second)
}

// Restart starts etcd again, on the same data directory and ports, and
// waits until it serves.
func (p *EtcdProcess) Restart() {
	p.t.Helper()
	if p.cmd != nil {
		p.t.Fatal("etcd is still running")
	}
	p.start()
}

func (p *EtcdProcess) stop(sig syscall.Signal, patience time.Duration) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(patience):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cmd = nil
}

func (p *EtcdProcess) start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = withoutEtcdVariables(os.Environ())
	var output lockedBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting %s: %v", p.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p.cmd, p.exited = cmd, exited

	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s, err := store.Open(ctx, store.Config{Endpoints: p.Endpoints(), TLS: p.client, DialTimeout: time.Second})
		cancel()
		if err == nil {
			s.Close()
			return
		}
		select {
		case err := <-exited:
			p.cmd = nil
			p.t.Fatalf("%s exited before serving: %v\n%s", p.bin, err, output.String())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s not serving on %s after 20s: %v\n%s", p.bin, p.endpoint, err, output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeAddr returns a 127.0.0.1 address with a port free at the time of
// the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withoutEtcdVariables drops ETCD_* settings of the environment, which
// etcd reads as flags.
func withoutEtcdVariables(env []string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD_") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// lockedBuffer collects a child's output written from another goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
