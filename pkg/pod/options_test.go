package pod

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod/podtest"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Seed 001 CNM network types against dockerd: HOST shares the agent's
// network, NONE has only lo, USER joins the network named by the net
// parameter with the address of the ip parameter.
func TestCNMNetworkModes(t *testing.T) {
	c := podtest.Docker(t)
	const userNet = "bcs-test-usernet"
	_ = c.RemoveNetwork(userNet)
	if _, err := c.CreateNetwork(docker.CreateNetworkOptions{
		Name: userNet, Driver: "bridge",
		IPAM: &docker.IPAMOptions{Config: []docker.IPAMConfig{{Subnet: "10.253.9.0/24"}}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.RemoveNetwork(userNet) })

	cases := []struct {
		mode     string
		params   []proto.Parameter
		wantMode string
		check    func(t *testing.T, info proto.ContainerInfo, addrs string)
	}{
		{NetworkHost, nil, "host", func(t *testing.T, info proto.ContainerInfo, addrs string) {
			if info.IPAddress != "127.0.0.1" || !strings.Contains(addrs, "docker0") {
				t.Errorf("HOST: IP %q (want the node address), interfaces %q", info.IPAddress, addrs)
			}
		}},
		{NetworkNone, nil, "none", func(t *testing.T, info proto.ContainerInfo, addrs string) {
			if strings.Contains(addrs, "eth0") || info.IPAddress != "" {
				t.Errorf("NONE: IP %q interfaces %q", info.IPAddress, addrs)
			}
		}},
		{NetworkUser, []proto.Parameter{{Key: "net", Value: userNet}, {Key: "ip", Value: "10.253.9.77"}}, userNet, func(t *testing.T, info proto.ContainerInfo, addrs string) {
			if info.IPAddress != "10.253.9.77" || !strings.Contains(addrs, "10.253.9.77/24") {
				t.Errorf("USER: IP %q interfaces %q", info.IPAddress, addrs)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := testConfig(t, c)
			main := containerTask("main", "exec sleep 100000")
			main.Spec.Container.NetworkMode = tc.mode
			main.Spec.Container.Parameters = tc.params
			side := containerTask("side", "exec sleep 100000")
			p, err := New(cfg, []Task{main, side})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctxT(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Kill(context.Background(), syscall.SIGKILL, 0) })
			info, _ := p.Info(main.ID)
			sideInfo, _ := p.Info(side.ID)
			if info.NetworkMode != tc.wantMode || sideInfo.NetworkMode != tc.wantMode || sideInfo.IPAddress != info.IPAddress {
				t.Errorf("main %+v side %+v, want network mode %s shared", info, sideInfo, tc.wantMode)
			}
			addrs, err := p.Exec(ctxT(t, 30*time.Second), side.ID, ExecRequest{Command: []string{"ip", "-o", "addr"}})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, info, addrs.Output)
			// HOST containers share the host's network; the others join a
			// network container, so that each can be re-created.
			if network := readRecord(t, cfg).NetworkContainer; (network == "") != (tc.mode == NetworkHost) {
				t.Errorf("network container %q in mode %s", network, tc.mode)
			}
		})
	}
}

// Manifest options reach dockerd: docker parameters, labels,
// volumes (pod-private and $BCS_POD_ID host paths), file owners by name,
// resources.
func TestContainerOptionsReachDockerd(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	hostDir := filepath.Join(t.TempDir(), "$BCS_POD_ID")
	if err := os.MkdirAll(strings.ReplaceAll(hostDir, "$BCS_POD_ID", cfg.PodID), 0o755); err != nil {
		t.Fatal(err)
	}
	task := containerTask("main", "echo private > /data/out; echo shared > /shared/out; exec sleep 100000")
	task.Spec.Container.Parameters = []proto.Parameter{
		{Key: "oom-kill-disable", Value: "true"}, {Key: "ulimit", Value: "nofile=1024:2048"}, {Key: "shm-size", Value: "32mb"},
	}
	task.Spec.Container.Labels = map[string]string{"app": "gamesvr"}
	task.Spec.Container.Volumes = []proto.Volume{{MountPath: "/data"}, {HostPath: hostDir, MountPath: "/shared"}}
	task.Spec.Files = []proto.File{{Path: "/etc/app/secret.conf", Content: []byte("k=v\n"), User: "nobody"}}
	task.Spec.Resources = proto.Resources{CPUs: 0.25, CPULimit: 0.5, MemMB: 32, MemLimitMB: 48}
	p, ins := startInspected(t, c, cfg, task)
	hc := ins.HostConfig
	if hc.OOMKillDisable == nil || !*hc.OOMKillDisable || hc.ShmSize != 32<<20 ||
		len(hc.Ulimits) != 1 || hc.Ulimits[0] != (docker.ULimit{Name: "nofile", Soft: 1024, Hard: 2048}) ||
		hc.CPUShares != 256 || hc.CPUQuota != 50000 || hc.CPUPeriod != 100000 || hc.Memory != 48<<20 {
		t.Errorf("host config: %+v", hc)
	}
	if ins.Config.Labels["app"] != "gamesvr" || ins.Config.Labels[LabelPod] != cfg.PodID || ins.Config.Labels[LabelTask] != task.ID {
		t.Errorf("labels %v", ins.Config.Labels)
	}
	// The limits are read from the container's main process: an exec'd
	// shell's own can be wrong on runc < 1.1.13 (its RLIMIT_NOFILE race with
	// the Go runtime, opencontainers/runc#4195; Debian 12 ships 1.1.5).
	out, _ := p.Exec(ctxT(t, 30*time.Second), task.ID, ExecRequest{Command: []string{"sh", "-c",
		"awk '/^Max open files/ {print $4, $5}' /proc/1/limits; stat -c '%U %a' /etc/app/secret.conf; cat /etc/app/secret.conf"}})
	if out.Output != "1024 2048\nnobody 600\nk=v\n" {
		t.Errorf("in container: %q", out.Output)
	}
	eventually(t, 5*time.Second, func() string {
		private, err1 := os.ReadFile(filepath.Join(cfg.SandboxDir, "volumes", cfg.PodID, "data", "out"))
		shared, err2 := os.ReadFile(filepath.Join(strings.ReplaceAll(hostDir, "$BCS_POD_ID", cfg.PodID), "out"))
		if string(private) != "private\n" || string(shared) != "shared\n" {
			return "volumes: " + string(private) + string(shared) + errString(err1) + errString(err2)
		}
		return ""
	})
}

// The resource parameters (seed 001: cpu-shares, memory-swap,
// memory-swappiness, device-{read,write}-{bps,iops}) reach dockerd's
// HostConfig and the container's cgroups (v1 here, as on the agents).
func TestResourceParametersReachDockerd(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	dev, devNum := blockDevice(t)
	task := containerTask("main", "exec sleep 100000")
	task.Spec.Container.Parameters = []proto.Parameter{
		{Key: "cpu-shares", Value: "512"}, {Key: "memory-swap", Value: "128m"}, {Key: "memory-swappiness", Value: "10"},
		{Key: "device-read-bps", Value: dev + ":1mb"}, {Key: "device-write-bps", Value: dev + ":2mb"},
		{Key: "device-read-iops", Value: dev + ":30"}, {Key: "device-write-iops", Value: dev + ":20"},
	}
	task.Spec.Resources = proto.Resources{CPUs: 0.25, MemLimitMB: 64}
	p, ins := startInspected(t, c, cfg, task)
	hc := ins.HostConfig
	rate := func(n int64) []docker.BlockLimit { return []docker.BlockLimit{{Path: dev, Rate: n}} }
	if hc.CPUShares != 512 || hc.Memory != 64<<20 || hc.MemorySwap != 128<<20 ||
		hc.MemorySwappiness == nil || *hc.MemorySwappiness != 10 ||
		!reflect.DeepEqual(hc.BlkioDeviceReadBps, rate(1<<20)) || !reflect.DeepEqual(hc.BlkioDeviceWriteBps, rate(2<<20)) ||
		!reflect.DeepEqual(hc.BlkioDeviceReadIOps, rate(30)) || !reflect.DeepEqual(hc.BlkioDeviceWriteIOps, rate(20)) {
		t.Errorf("host config: shares %d memory %d swap %d swappiness %v bps %v %v iops %v %v", hc.CPUShares, hc.Memory, hc.MemorySwap,
			hc.MemorySwappiness, hc.BlkioDeviceReadBps, hc.BlkioDeviceWriteBps, hc.BlkioDeviceReadIOps, hc.BlkioDeviceWriteIOps)
	}
	out, _ := p.Exec(ctxT(t, 30*time.Second), task.ID, ExecRequest{Command: []string{"sh", "-c", "cd /sys/fs/cgroup && cat cpu/cpu.shares " +
		"memory/memory.memsw.limit_in_bytes memory/memory.swappiness blkio/blkio.throttle.read_bps_device " +
		"blkio/blkio.throttle.write_bps_device blkio/blkio.throttle.read_iops_device blkio/blkio.throttle.write_iops_device"}})
	want := fmt.Sprintf("512\n%d\n10\n%[2]s 1048576\n%[2]s 2097152\n%[2]s 30\n%[2]s 20\n", 128<<20, devNum)
	if out.Output != want {
		t.Errorf("container cgroups:\n%s\nwant\n%s", out.Output, want)
	}
	// update-resources changes memory; the cpu-shares and memory-swap
	// parameters stay what they made the container.
	if err := p.UpdateResources(ctxT(t, 10*time.Second), task.ID, proto.Resources{CPUs: 1, MemMB: 64, MemLimitMB: 100}); err != nil {
		t.Fatal(err)
	}
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: ins.ID})
	if err != nil ||
		ins.HostConfig.CPUShares != 512 || ins.HostConfig.Memory != 100<<20 || ins.HostConfig.MemorySwap != 128<<20 {
		t.Errorf("after update-resources: shares %d memory %d swap %d (%v), want 512, 100m, 128m",
			ins.HostConfig.CPUShares, ins.HostConfig.Memory, ins.HostConfig.MemorySwap, err)
	}
}

// blockDevice is a block device of this machine and its major:minor.
func blockDevice(t *testing.T) (path, number string) {
	t.Helper()
	entries, _ := os.ReadDir("/sys/block")
	for _, e := range entries {
		dev, err := os.ReadFile(filepath.Join("/sys/block", e.Name(), "dev"))
		if _, statErr := os.Stat("/dev/" + e.Name()); err == nil && statErr == nil {
			return "/dev/" + e.Name(), strings.TrimSpace(string(dev))
		}
	}
	t.Fatal("no block device under /sys/block with a /dev node")
	return "", ""
}

// startInspected starts a pod of task, killed when the test ends, and
// returns it with its container as dockerd reports it.
func startInspected(t *testing.T, c *docker.Client, cfg Config, task Task) (*Pod, *docker.Container) {
	t.Helper()
	p, err := New(cfg, []Task{task})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(context.Background(), syscall.SIGKILL, 0) })
	info, _ := p.Info(task.ID)
	ins, err := c.InspectContainerWithOptions(docker.InspectContainerOptions{ID: info.ID})
	if err != nil {
		t.Fatal(err)
	}
	return p, ins
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

// The rm docker parameter: dockerd removes the container itself; the pod
// still sees the exit and finishes.
func TestAutoRemoveContainerFinishes(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	task := containerTask("main", "sleep 0.3")
	task.Spec.Container.Parameters = []proto.Parameter{{Key: "rm", Value: "true"}}
	p, err := New(cfg, []Task{task})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(ctxT(t, 30*time.Second)); err != nil || st != taskstate.Finished {
		t.Fatalf("pod %s %v, want finished; tasks %+v", st, err, p.Tasks())
	}
}

// A pod killed before it started ends at once, killed.
func TestKillBeforeStart(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	p, err := New(cfg, []Task{containerTask("main", "true")})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(ctxT(t, 10*time.Second), syscall.SIGTERM, -1); err != nil {
		t.Fatal(err)
	}
	if p.State() != taskstate.Killed || p.Tasks()[0].State != taskstate.Killed {
		t.Fatalf("pod %s task %s, want killed", p.State(), p.Tasks()[0].State)
	}
	if err := p.Start(ctxT(t, 10*time.Second)); err == nil {
		t.Fatal("start after kill succeeded")
	}
}

// privileged and hostname go into the create options (this test machine's
// runc may not grant a privileged container its capabilities, so the
// container is not started).
func TestPrivilegedAndHostnameOptions(t *testing.T) {
	c := podtest.Docker(t)
	cfg := testConfig(t, c)
	task := containerTask("main", "true")
	task.Spec.Container.Privileged = true
	task.Spec.Container.Hostname = "gamesvr-0"
	p, err := New(cfg, []Task{task})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.createOptions(ctxT(t, 10*time.Second), p.tasks[0], p.tasks[0].spec)
	if err != nil {
		t.Fatal(err)
	}
	opts := plan.opts
	if !opts.HostConfig.Privileged || opts.Config.Hostname != "gamesvr-0" || opts.HostConfig.NetworkMode != "bridge" || opts.Name != ContainerName(cfg.Framework, cfg.PodID, "main") {
		t.Errorf("create options %+v %+v", opts.Config, opts.HostConfig)
	}
}
