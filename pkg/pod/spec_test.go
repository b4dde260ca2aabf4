package pod

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Seed 001 "行为规定": Value / Arguments against the image's entrypoint.
func TestCommandRules(t *testing.T) {
	cases := []struct {
		name            string
		value           string
		args            []string
		imageEntrypoint []string
		wantEntrypoint  []string
		wantCmd         []string
		wantErr         bool
	}{
		{"entrypoint, Value set: Value overrides it, Arguments follow", "/bin/app", []string{"-x"}, []string{"/entry"}, []string{"/bin/app"}, []string{"-x"}, false},
		{"entrypoint, no Value: Arguments are its arguments", "", []string{"-x", "1"}, []string{"/entry"}, nil, []string{"-x", "1"}, false},
		{"entrypoint, nothing set: image defaults", "", nil, []string{"/entry"}, nil, nil, false},
		{"no entrypoint, Value empty: start fails", "", []string{"-x"}, nil, nil, nil, true},
		{"no entrypoint: Value then Arguments as CMD", "sh", []string{"-c", "echo hi"}, nil, nil, []string{"sh", "-c", "echo hi"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep, cmd, err := commandFor(&proto.ContainerSpec{Image: "img", Command: tc.value, Args: tc.args}, tc.imageEntrypoint)
			if tc.wantErr {
				if !errors.Is(err, errdefs.ErrInvalidArgument) {
					t.Fatalf("err %v, want invalid argument", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(ep, tc.wantEntrypoint) || !reflect.DeepEqual(cmd, tc.wantCmd) {
				t.Fatalf("entrypoint %q cmd %q err %v; want %q %q", ep, cmd, err, tc.wantEntrypoint, tc.wantCmd)
			}
		})
	}
}

// Seed 001 env injection: "$HOST" / "$BCS_POD_ID" take the injected value,
// one level only; "${NAME}" of an injected variable within a value too
// (the docs write it so), others kept as written.
func TestEnvSubstitution(t *testing.T) {
	spec := &proto.TaskSpec{
		Ports: []proto.Port{{Name: "http", ContainerPort: 80, HostPort: 31000}, {Name: "udp", ContainerPort: 9000}},
		Env: []proto.EnvVar{
			{Name: "test_env", Value: "test_env"},
			{Name: "CONTAINERIP", Value: "$HOST"},
			{Name: "RANDOMID", Value: "$BCS_POD_ID"},
			{Name: "MYPORT", Value: "$PORT_http"},
			{Name: "HOST", Value: "$OtherENV"}, // not an injected name: kept verbatim
			{Name: "NESTED", Value: "$CONTAINERIP"},
			{Name: "PARTIAL", Value: "x$HOST"},
			{Name: "BRACED", Value: "${HOST}"},
			{Name: "IFACE", Value: "$BCS_CNI_NAME"},
			{Name: "UNCLOSED", Value: "${HOST"},
			{Name: "WITHIN", Value: "http://${HOST}:${PORT_http}/${OTHER}/${BCS_NODE_ADDR}${BCS_POD_ID}"},
		},
	}
	got := buildEnv(containerEnv{podID: "pod-1", nodeAddr: "10.0.0.5", hostIP: "10.1.0.9", cniName: "eth0"}, spec)
	want := []string{
		"HOST=10.1.0.9", "BCS_NODE_ADDR=10.0.0.5", "BCS_POD_ID=pod-1", "BCS_CNI_NAME=eth0",
		"PORT_http=31000", "PORT_udp=9000",
		"test_env=test_env", "CONTAINERIP=10.1.0.9", "RANDOMID=pod-1", "MYPORT=31000",
		"HOST=$OtherENV", "NESTED=$CONTAINERIP", "PARTIAL=x$HOST", "BRACED=10.1.0.9", "IFACE=eth0", "UNCLOSED=${HOST",
		"WITHIN=http://10.1.0.9:31000/${OTHER}/10.0.0.5pod-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("env\n got %q\nwant %q", got, want)
	}
	// CNM: no CNI interface, and its variable is empty, not left as
	// "$BCS_CNI_NAME" for a program to read as a name.
	got = buildEnv(containerEnv{podID: "pod-1", nodeAddr: "10.0.0.5", hostIP: "10.0.0.5"}, spec)
	if !slices.Contains(got, "BCS_CNI_NAME=") || !slices.Contains(got, "IFACE=") || !slices.Contains(got, "BRACED=10.0.0.5") {
		t.Errorf("CNM env %q: want BCS_CNI_NAME and IFACE empty, BRACED the node address", got)
	}
}

// The docker parameters (read by pkg/dockerparam, tested there) land on
// docker's HostConfig, after the resources: cpu-shares overrides the
// requested cpus', memory-swap the resources' swap unless below memory.
func TestDockerParametersOnHostConfig(t *testing.T) {
	o, err := parseParams([]proto.Parameter{
		{Key: "oom-kill-disable", Value: "true"}, {Key: "--ulimit", Value: "nofile=1024:2048"},
		{Key: "rm", Value: ""}, {Key: "shm-size", Value: "64mb"},
		{Key: "memory-swap", Value: "512m"}, {Key: "memory-swappiness", Value: "0"}, {Key: "cpu-shares", Value: "512"},
		{Key: "device-read-bps", Value: "/dev/vda:10mb"}, {Key: "device-write-bps", Value: "/dev/vda:1gb"},
		{Key: "device-read-iops", Value: "/dev/vda:100"}, {Key: "device-write-iops", Value: "/dev/vda:50"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var hc docker.HostConfig
	if err := applyResources(&hc, proto.Resources{CPUs: 1.5, MemLimitMB: 256}); err != nil {
		t.Fatal(err)
	}
	applyParams(&hc, o)
	if hc.OOMKillDisable == nil || !*hc.OOMKillDisable || !hc.AutoRemove || hc.ShmSize != 64<<20 ||
		!reflect.DeepEqual(hc.Ulimits, []docker.ULimit{{Name: "nofile", Soft: 1024, Hard: 2048}}) ||
		hc.CPUShares != 512 || hc.Memory != 256<<20 || hc.MemorySwap != 512<<20 ||
		hc.MemorySwappiness == nil || *hc.MemorySwappiness != 0 ||
		!reflect.DeepEqual(hc.BlkioDeviceReadBps, []docker.BlockLimit{{Path: "/dev/vda", Rate: 10 << 20}}) ||
		!reflect.DeepEqual(hc.BlkioDeviceWriteBps, []docker.BlockLimit{{Path: "/dev/vda", Rate: 1 << 30}}) ||
		!reflect.DeepEqual(hc.BlkioDeviceReadIOps, []docker.BlockLimit{{Path: "/dev/vda", Rate: 100}}) ||
		!reflect.DeepEqual(hc.BlkioDeviceWriteIOps, []docker.BlockLimit{{Path: "/dev/vda", Rate: 50}}) {
		t.Errorf("host config %+v", hc)
	}
	for swap, want := range map[string]int64{"128m": 0, "-1": -1, "256m": 256 << 20} {
		o, _ := parseParams([]proto.Parameter{{Key: "memory-swap", Value: swap}})
		hc := docker.HostConfig{}
		_ = applyResources(&hc, proto.Resources{MemLimitMB: 256, MemSwapMB: 300})
		applyParams(&hc, o)
		if want == 0 { // below memory: the resources' swap stays (seed 001)
			want = 300 << 20
		}
		if hc.MemorySwap != want {
			t.Errorf("memory-swap %s with memory 256m: %d, want %d", swap, hc.MemorySwap, want)
		}
	}
	_, err = parseParams([]proto.Parameter{{Key: "ulimit", Value: "nofile=1024"}, {Key: "device-read-bps", Value: "vda:1mb"}})
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), `docker parameter "device-read-bps"="vda:1mb": `) {
		t.Errorf("a bad parameter: %v, want invalid argument naming it", err)
	}
	if _, err := networkMode(NetworkUser, dockerparam.Options{}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("USER without net: %v, want invalid argument", err)
	}
}

// Seed 001 resource limits.
func TestResources(t *testing.T) {
	var hc docker.HostConfig
	err := applyResources(&hc, proto.Resources{CPUs: 1.5, CPULimit: 2, MemMB: 100, MemLimitMB: 256, MemSwapMB: 512})
	if err != nil {
		t.Fatal(err)
	}
	if hc.CPUShares != 1536 || hc.CPUPeriod != 100000 || hc.CPUQuota != 200000 || hc.Memory != 256<<20 || hc.MemorySwap != 512<<20 {
		t.Errorf("host config %+v", hc)
	}
	// memory-swap below memory means unlimited; memory alone falls back to memMB.
	hc = docker.HostConfig{}
	if err := applyResources(&hc, proto.Resources{MemMB: 64, MemSwapMB: 32}); err != nil || hc.Memory != 64<<20 || hc.MemorySwap != 0 {
		t.Errorf("swap below memory: %+v %v", hc, err)
	}
	if err := applyResources(&docker.HostConfig{}, proto.Resources{MemLimitMB: 3}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("memory below 4MB: %v, want invalid argument", err)
	}
}

// Volumes: an empty hostPath is a pod-private sandbox directory;
// $BCS_POD_ID in a host path is the pod ID.
func TestVolumes(t *testing.T) {
	sandbox := t.TempDir()
	got, err := binds([]proto.Volume{
		{MountPath: "/data/logs"},
		{HostPath: "/var/log/$BCS_POD_ID", MountPath: "/logs", ReadOnly: true},
	}, "pod-7", sandbox)
	if err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(sandbox, "volumes", "pod-7", "data_logs")
	if want := []string{private + ":/data/logs", "/var/log/pod-7:/logs:ro"}; !slices.Equal(got, want) {
		t.Errorf("binds %q, want %q", got, want)
	}
	if st, err := os.Stat(private); err != nil || !st.IsDir() {
		t.Errorf("pod-private dir not created: %v", err)
	}
	if _, err := binds([]proto.Volume{{MountPath: "relative"}}, "p", sandbox); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("relative mount: %v", err)
	}
}

// BRIDGE: every task's ports are published on the network owner.
func TestPortBindings(t *testing.T) {
	exposed, b := portBindings([]*proto.TaskSpec{
		{Ports: []proto.Port{{Name: "http", ContainerPort: 8080, HostPort: 31000}}},
		{Ports: []proto.Port{{Name: "game", ContainerPort: 9000, HostPort: 31001, Protocol: "UDP"}, {Name: "host-only", HostPort: 31002}}},
	}, "127.0.0.1")
	if len(exposed) != 3 || !reflect.DeepEqual(b["8080/tcp"], []docker.PortBinding{{HostIP: "127.0.0.1", HostPort: "31000"}}) ||
		!reflect.DeepEqual(b["9000/udp"], []docker.PortBinding{{HostIP: "127.0.0.1", HostPort: "31001"}}) ||
		!reflect.DeepEqual(b["31002/tcp"], []docker.PortBinding{{HostIP: "127.0.0.1", HostPort: "31002"}}) {
		t.Errorf("exposed %v bindings %v", exposed, b)
	}
}
