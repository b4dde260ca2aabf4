package healthcheck

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Prober runs one check; nil means healthy. The context carries the
// check's timeout.
type Prober interface {
	Probe(ctx context.Context) error
}

// ExecFunc runs a health check command and returns its combined output
// and exit code; err is for failures to run it at all.
type ExecFunc func(ctx context.Context, command string) (output []byte, exitCode int, err error)

// DialFunc connects to address as net.Dialer.DialContext does. HTTP and
// TCP probes connect only through their prober's: the runtime passes
// one that refuses the control plane (an egress policy's DialContext).
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// PortResolver maps a port name of the task to the port to probe.
type PortResolver func(name string) (int, bool)

// PortByName resolves names from a task's ports with seed 000's rule:
// in BRIDGE mode the hostPort when > 0, else the containerPort; in other
// modes the containerPort.
func PortByName(ports []proto.Port, networkMode string) PortResolver {
	return func(name string) (int, bool) {
		for _, p := range ports {
			if p.Name != name {
				continue
			}
			if strings.EqualFold(networkMode, "BRIDGE") && p.HostPort > 0 {
				return p.HostPort, true
			}
			return p.ContainerPort, p.ContainerPort > 0
		}
		return 0, false
	}
}

// HTTPProbe GETs URL; a status of 200–399 is healthy.
type HTTPProbe struct {
	URL     string
	Headers map[string]string
	client  *http.Client
}

// TCPProbe connects to Addr.
type TCPProbe struct {
	Addr string
	dial DialFunc
}

// CommandProbe runs Command through Exec; exit code 0 is healthy.
type CommandProbe struct {
	Command string
	Exec    ExecFunc
}

var (
	_ Prober = (*HTTPProbe)(nil)
	_ Prober = (*TCPProbe)(nil)
	_ Prober = (*CommandProbe)(nil)
)

// NewProber builds the probe of check against host. HTTP and TCP checks
// with port 0 take their port from portName through ports, and connect
// through dial (nil: directly); COMMAND needs run.
func NewProber(check proto.HealthCheck, host string, ports PortResolver, run ExecFunc, dial DialFunc) (Prober, error) {
	typ := strings.ToUpper(check.Type)
	port := check.Port
	if (typ == "HTTP" || typ == "TCP") && port <= 0 {
		p, ok := 0, false
		if ports != nil && check.PortName != "" {
			p, ok = ports(check.PortName)
		}
		if !ok || p <= 0 {
			return nil, fmt.Errorf("%s health check: no port and port name %q not found: %w", typ, check.PortName, errdefs.ErrInvalidArgument)
		}
		port = p
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	switch typ {
	case "HTTP":
		scheme := strings.ToLower(check.Scheme)
		if scheme == "" {
			scheme = "http"
		}
		if scheme != "http" && scheme != "https" {
			return nil, fmt.Errorf("HTTP health check: scheme %q: %w", check.Scheme, errdefs.ErrInvalidArgument)
		}
		path := check.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		return &HTTPProbe{URL: scheme + "://" + addr + path, Headers: check.Headers, client: probeClient(dial)}, nil
	case "TCP":
		return &TCPProbe{Addr: addr, dial: dial}, nil
	case "COMMAND":
		if check.Command == "" || run == nil {
			return nil, fmt.Errorf("COMMAND health check without a command or a way to run it: %w", errdefs.ErrInvalidArgument)
		}
		return &CommandProbe{Command: check.Command, Exec: run}, nil
	}
	return nil, fmt.Errorf("health check type %q is not run by executors: %w", check.Type, errdefs.ErrInvalidArgument)
}

// probeClient is an HTTP probe's client, connecting through dial (nil:
// directly); it takes no proxy, keeps no connection and follows no
// redirect.
func probeClient(dial DialFunc) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // seed 000: https checks do not verify
			DisableKeepAlives: true,
			Proxy:             nil,
			DialContext:       dial,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Probe implements Prober.
func (p *HTTPProbe) Probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return err
	}
	for k, v := range p.Headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := p.client
	if client == nil {
		client = probeClient(nil)
	}
	resp, err := client.Do(req)
	if urlErr := (*url.Error)(nil); errors.As(err, &urlErr) {
		err = urlErr.Err // which would say "Get <URL>" again
	}
	if err != nil {
		return fmt.Errorf("GET %s: %w", p.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 399 {
		return fmt.Errorf("GET %s: status %d", p.URL, resp.StatusCode)
	}
	return nil
}

// Probe implements Prober.
func (p *TCPProbe) Probe(ctx context.Context) error {
	dial := p.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", p.Addr)
	if err != nil {
		return fmt.Errorf("connect %s: %w", p.Addr, err)
	}
	return conn.Close()
}

// Probe implements Prober.
func (p *CommandProbe) Probe(ctx context.Context) error {
	out, code, err := p.Exec(ctx, p.Command)
	if err != nil {
		return fmt.Errorf("command %q: %w", p.Command, err)
	}
	if code != 0 {
		return fmt.Errorf("command %q exited with %d: %s", p.Command, code, truncate(out, 200))
	}
	return nil
}

func truncate(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Shell returns an ExecFunc that runs commands with RunShell, their
// output bounded by proto.OutputBuffer.
func Shell(dir string, env []string, cred *syscall.Credential) ExecFunc {
	return func(ctx context.Context, command string) ([]byte, int, error) {
		var out proto.OutputBuffer
		code, err := RunShell(ctx, dir, env, cred, command, &out)
		return []byte(out.String()), code, err
	}
}

// RunShell runs command with /bin/sh -c in dir with env, as cred when not
// nil, in its own process group (killed whole when ctx ends), and writes
// its stdout and stderr to out. It returns the exit code, -1 when the
// command did not exit by itself.
func RunShell(ctx context.Context, dir string, env []string, cred *syscall.Credential, command string, out io.Writer) (int, error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		return -1, fmt.Errorf("timed out: %w", ctx.Err())
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}
