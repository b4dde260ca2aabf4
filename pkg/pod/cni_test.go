package pod

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// debianCNIPlugins is where Debian's containernetworking-plugins installs
// bridge, host-local and portmap (scripts/test-deps).
const debianCNIPlugins = "/usr/lib/cni"

// cniNet is a test CNI network: a bridge of its own and a private /24
// whose host-local allocations live in a test directory.
type cniNet struct {
	name, bridge, subnet, ipamDir string
}

// testCNI writes a bridge + host-local + portmap conf list (cniVersion
// 1.0.0) into a fresh conf dir and returns a CNI-mode config for it. The
// bridge is deleted in t.Cleanup.
func testCNI(t *testing.T, c *docker.Client, octet int) (Config, cniNet) {
	t.Helper()
	for _, plugin := range []string{"bridge", "host-local", "portmap"} {
		if _, err := os.Stat(filepath.Join(debianCNIPlugins, plugin)); err != nil {
			t.Fatalf("CNI plugin %s missing (%v): run scripts/test-deps (make test-deps)", plugin, err)
		}
	}
	cfg := testConfig(t, c)
	dir := t.TempDir()
	n := cniNet{
		name:    "bcs-test-net",
		bridge:  fmt.Sprintf("bcst%d", octet),
		subnet:  fmt.Sprintf("10.254.%d.0/24", octet),
		ipamDir: filepath.Join(dir, "ipam"),
	}
	_ = exec.Command("ip", "link", "del", n.bridge).Run()
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", n.bridge).Run() })
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       n.name,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": n.bridge, "isGateway": true, "ipMasq": false,
				"ipam": map[string]any{
					"type": "host-local", "dataDir": n.ipamDir,
					"ranges": [][]map[string]string{{{"subnet": n.subnet}}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	data, _ := json.Marshal(conf)
	confDir := filepath.Join(dir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-test.conflist"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Network = NetworkCNI
	cfg.CNI = CNIConfig{
		PluginDirs: []string{debianCNIPlugins}, ConfDir: confDir, CacheDir: filepath.Join(dir, "cache"),
		Network: n.name,
	}
	return cfg, n
}

// allocations lists the host-local IP reservations of the network.
func (n cniNet) allocations(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join(n.ipamDir, n.name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ips []string
	for _, e := range entries {
		if net.ParseIP(e.Name()) != nil {
			ips = append(ips, e.Name())
		}
	}
	return ips
}

// ports lists the interfaces enslaved to the test bridge (the veths).
func (n cniNet) ports(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join("/sys/class/net", n.bridge, "brif"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func (n cniNet) assertTornDown(t *testing.T, c *docker.Client, cfg Config) {
	t.Helper()
	if left := labelled(t, c, cfg); left != 0 {
		t.Errorf("%d containers left", left)
	}
	if ips := n.allocations(t); len(ips) != 0 {
		t.Errorf("host-local allocations left: %v", ips)
	}
	if ports := n.ports(t); len(ports) != 0 {
		t.Errorf("veths left on %s: %v", n.bridge, ports)
	}
	if _, err := os.Stat(recordPath(cfg.SandboxDir, cfg.PodID)); !os.IsNotExist(err) {
		t.Errorf("state file still there: %v", err)
	}
}

// Seed 001 CNI mode: the network container gets the CNI attachment, the
// business containers join it (one IP, one netns), HOST is the CNI IP; on
// stop: business containers, CNI DEL, network container.
func TestCNIPodSharesNetwork(t *testing.T) {
	c := podtest.Docker(t)
	cfg, n := testCNI(t, c, 77)
	web := containerTask("web", httpdScript)
	web.Spec.Container.NetworkMode = n.name
	web.Spec.Container.NetworkType = "cni"
	web.Spec.Env = []proto.EnvVar{{Name: "MYIP", Value: "$HOST"}}
	web.Spec.Files = []proto.File{{Path: "/www/index.html", Content: []byte("cni web\n")}}
	side := containerTask("side", "exec sleep 100000")
	p, err := New(cfg, []Task{web, side})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	info, _ := p.Info(web.ID)
	_, subnet, _ := net.ParseCIDR(n.subnet)
	ip := net.ParseIP(info.IPAddress)
	if ip == nil || !subnet.Contains(ip) || info.NetworkMode != "cni" {
		t.Fatalf("web info %+v, want an IP of %s", info, n.subnet)
	}
	if ips := n.allocations(t); len(ips) != 1 || ips[0] != info.IPAddress {
		t.Errorf("host-local allocations %v, want [%s]", ips, info.IPAddress)
	}
	res, err := p.Exec(ctxT(t, 30*time.Second), side.ID, ExecRequest{Command: []string{"wget", "-qO-", "http://127.0.0.1:8080/index.html"}})
	if err != nil || res.Output != "cni web\n" {
		t.Fatalf("side → web on 127.0.0.1: %+v, %v", res, err)
	}
	addr, _ := p.Exec(ctxT(t, 30*time.Second), side.ID, ExecRequest{Command: []string{"ip", "-4", "-o", "addr", "show", "eth0"}})
	if !strings.Contains(addr.Output, info.IPAddress+"/24") {
		t.Errorf("side's eth0 %q lacks the pod IP %s", addr.Output, info.IPAddress)
	}
	env, _ := p.Exec(ctxT(t, 30*time.Second), web.ID, ExecRequest{Command: []string{"env"}})
	for _, want := range []string{"HOST=" + info.IPAddress, "MYIP=" + info.IPAddress, "BCS_CNI_NAME=eth0"} {
		if !strings.Contains(env.Output, want+"\n") {
			t.Errorf("env lacks %q:\n%s", want, env.Output)
		}
	}
	// The host reaches the pod IP over the test bridge.
	eventually(t, 10*time.Second, func() string {
		resp, err := http.Get("http://" + info.IPAddress + ":8080/index.html")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "cni web\n" {
			return fmt.Sprintf("host → pod IP: %q", body)
		}
		return ""
	})

	if err := p.Kill(ctxT(t, 30*time.Second), syscall.SIGTERM, time.Second); err != nil {
		t.Fatal(err)
	}
	if p.State() != taskstate.Killed {
		t.Errorf("pod %s, want killed", p.State())
	}
	n.assertTornDown(t, c, cfg)
}

// The original executor leaked the CNI attachment when it died. Here the
// state file in the sandbox lets a restarted executor tear everything down.
func TestCrashedExecutorCleanupFromStateFile(t *testing.T) {
	c := podtest.Docker(t)
	cfg, n := testCNI(t, c, 78)
	web := containerTask("web", httpdScript)
	web.Spec.Container.NetworkMode = n.name
	side := containerTask("side", "exec sleep 100000")
	p, err := New(cfg, []Task{web, side})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatalf("start: %v", err)
	}
	// The executor dies: its goroutines stop, nothing is torn down.
	p.cancelMon()
	p = nil
	if got := labelled(t, c, cfg); got != 3 {
		t.Fatalf("%d containers before cleanup, want 3 (network + 2)", got)
	}
	if len(n.allocations(t)) != 1 || len(n.ports(t)) != 1 {
		t.Fatalf("before cleanup: allocations %v veths %v", n.allocations(t), n.ports(t))
	}

	// The restarted executor only knows its sandbox.
	restarted := Config{Docker: c, SandboxDir: cfg.SandboxDir}
	if pods, err := Cleanup(ctxT(t, time.Minute), restarted); err != nil || pods != 1 {
		t.Fatalf("cleanup: %d pods, %v; want the one pod", pods, err)
	}
	n.assertTornDown(t, c, cfg)
	if entries, _ := os.ReadDir(cfg.CNI.CacheDir); len(entries) > 0 {
		var names []string
		filepath.WalkDir(cfg.CNI.CacheDir, func(path string, d os.DirEntry, err error) error {
			if d != nil && !d.IsDir() {
				names = append(names, path)
			}
			return nil
		})
		if len(names) != 0 {
			t.Errorf("libcni cache left: %v", names)
		}
	}
}
