package podruntime

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// debianCNIPlugins is where Debian's containernetworking-plugins installs
// bridge, host-local and portmap (scripts/test-deps).
const debianCNIPlugins = "/usr/lib/cni"

// cniBridge is withCNI's bridge.
const cniBridge = "bcsrt231"

// withCNI configures --network-mode cni with a bridge + host-local conf
// list (cniVersion 1.0.0) on a bridge and /24 of the test's own; it
// returns the host-local data dir. The bridge is deleted in t.Cleanup.
func withCNI(t *testing.T, cfg *Config) (ipamDir string) {
	t.Helper()
	for _, plugin := range []string{"bridge", "host-local", "portmap"} {
		if _, err := os.Stat(filepath.Join(debianCNIPlugins, plugin)); err != nil {
			t.Fatalf("CNI plugin %s missing (%v): run scripts/test-deps", plugin, err)
		}
	}
	const bridge, subnet, name = cniBridge, "10.254.231.0/24", "bcs-rt-net"
	dir := t.TempDir()
	ipamDir = filepath.Join(dir, "ipam")
	_ = exec.Command("ip", "link", "del", bridge).Run()
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       name,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": bridge, "isGateway": true, "ipMasq": false,
				"ipam": map[string]any{"type": "host-local", "dataDir": ipamDir, "ranges": [][]map[string]string{{{"subnet": subnet}}}},
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
	cfg.Network = pod.NetworkCNI
	cfg.CNI = pod.CNIConfig{
		PluginDirs: []string{debianCNIPlugins}, ConfDir: confDir, CacheDir: filepath.Join(dir, "cache"),
		Network: name,
	}
	return ipamDir
}

// cniPod is a web server with an HTTP check on its container port and a
// sidecar, in the CNI network of withCNI.
func cniPod() (web, side executor.Task) {
	web = containerTask("web.0", "web", httpdScript)
	web.Spec.Container.NetworkMode = "bcs-rt-net"
	web.Spec.Ports = []proto.Port{{Name: "http", ContainerPort: 8080}}
	check := fastCheck("HTTP")
	check.PortName, check.Path = "http", "/health"
	web.Spec.HealthChecks = []proto.HealthCheck{check}
	side = containerTask("side.0", "side", "exec sleep 100000")
	side.Spec.Container.NetworkMode = "bcs-rt-net"
	return web, side
}

// CNI mode (--network-mode cni): RUNNING data carries the CNI address and
// network mode "cni"; an HTTP check by port name without a hostPort
// probes the container's own address; KILL tears down the containers and
// the CNI attachment (no host-local reservation left).
func TestCNIPodHealthCheckOnContainerIP(t *testing.T) {
	c := podtest.Docker(t)
	var ipamDir string
	rt, cfg := newRuntime(t, c, func(cfg *Config) { ipamDir = withCNI(t, cfg) })
	rep := newReporter(t)
	web, side := cniPod()
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)

	for _, task := range []executor.Task{web, side} {
		running := rep.awaitState(task.ID(), taskstate.Running)
		info := containerInfo(t, running)
		_, subnet, _ := net.ParseCIDR("10.254.231.0/24")
		if info.NetworkMode != "cni" || !subnet.Contains(net.ParseIP(info.IPAddress)) {
			t.Errorf("task %q RUNNING data %+v, want a CNI address", task.ID(), info)
		}
		// The address goes in TaskStatus.container_status.network_infos
		// too, where Mesos reports a container's IPs.
		if !slices.Equal(running.IPAddresses, []string{info.IPAddress}) {
			t.Errorf("task %q RUNNING addresses %v, want the pod's %s", task.ID(), running.IPAddresses, info.IPAddress)
		}
	}
	rep.awaitHealthy(web.ID(), true)

	rep.Report(executor.Report{TaskID: web.ID(), State: taskstate.Killing})
	rt.Kill(web.ID(), 0)
	rep.awaitState(web.ID(), taskstate.Killed)
	rep.awaitState(side.ID(), taskstate.Killed)
	waitDone(t, rt)
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left", len(left))
	}
	if ips := reservationsIn(t, ipamDir); len(ips) != 0 {
		t.Errorf("host-local reservations left: %v", ips)
	}
}

// reservationsIn lists the host-local IP reservations of withCNI's network.
func reservationsIn(t *testing.T, ipamDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ipamDir, "bcs-rt-net"))
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

// Seed 001: the pod's network is held by the network container ("CNI pod
// ... 网络容器如果被人为杀掉"); killed from outside, every task fails
// (TASK_FAILED, so the restart policy relaunches the group) with a message
// naming it, instead of running on without a network, and nothing is
// left: no container, no veth on the bridge (the netns went with the
// network container), no host-local address.
func TestCNINetworkContainerKilledFailsTasks(t *testing.T) {
	c := podtest.Docker(t)
	var ipamDir string
	rt, cfg := newRuntime(t, c, func(cfg *Config) { ipamDir = withCNI(t, cfg) })
	rep := newReporter(t)
	web, side := cniPod()
	rt.Launch(context.Background(), []executor.Task{web, side}, rep)
	for _, task := range []executor.Task{web, side} {
		rep.awaitState(task.ID(), taskstate.Running)
	}
	if ips := reservationsIn(t, ipamDir); len(ips) != 1 {
		t.Fatalf("host-local reservations while running: %v, want one", ips)
	}
	var network string
	for _, ct := range labelledContainers(t, c, cfg.Labels[podtest.Label]) {
		if ct.Labels[pod.LabelRole] == "network" {
			network = ct.ID
		}
	}
	if network == "" {
		t.Fatal("no network container")
	}
	if err := c.KillContainer(docker.KillContainerOptions{ID: network, Signal: docker.SIGKILL}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []executor.Task{web, side} {
		if r := rep.awaitState(task.ID(), taskstate.Failed); !strings.Contains(r.Message, "network container") {
			t.Errorf("task %q failed with %q, want the network container named", task.ID(), r.Message)
		}
	}
	waitDone(t, rt)
	if left := labelledContainers(t, c, cfg.Labels[podtest.Label]); len(left) != 0 {
		t.Errorf("%d containers left", len(left))
	}
	if ips := reservationsIn(t, ipamDir); len(ips) != 0 {
		t.Errorf("host-local reservations left: %v", ips)
	}
	if veths, err := os.ReadDir("/sys/class/net/" + cniBridge + "/brif"); err != nil || len(veths) != 0 {
		t.Errorf("veths left on %s: %v (%v)", cniBridge, veths, err)
	}
}
