package dockerparam_test

import (
	"reflect"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
)

func ptr[T any](v T) *T { return &v }

// Each supported parameter in docker run's form (seed 001: cpu-shares,
// memory-swap, memory-swappiness, device-{read,write}-{bps,iops} as
// "path:rate" with kb/mb/gb units for bps, a count for iops).
func TestEveryParameter(t *testing.T) {
	cases := []struct {
		key, value string
		want       dockerparam.Options
	}{
		{"oom-kill-disable", "true", dockerparam.Options{OOMKillDisable: ptr(true)}},
		{"oom-kill-disable", "", dockerparam.Options{OOMKillDisable: ptr(true)}}, // a bare flag
		{"oom-kill-disable", "false", dockerparam.Options{OOMKillDisable: ptr(false)}},
		{"rm", "true", dockerparam.Options{AutoRemove: true}},
		{"ulimit", "nofile=1024:2048", dockerparam.Options{Ulimits: []dockerparam.Ulimit{{Name: "nofile", Soft: 1024, Hard: 2048}}}},
		{"--ulimit", "core=-1", dockerparam.Options{Ulimits: []dockerparam.Ulimit{{Name: "core", Soft: -1, Hard: -1}}}},
		{"shm-size", "64mb", dockerparam.Options{ShmSize: 64 << 20}},
		{"shm-size", "1g", dockerparam.Options{ShmSize: 1 << 30}},
		{"shm-size", "4096", dockerparam.Options{ShmSize: 4096}},
		{"ip", "10.9.0.3", dockerparam.Options{IP: "10.9.0.3"}},
		{"net", "mynet", dockerparam.Options{Net: "mynet"}},
		{"network", "mynet", dockerparam.Options{Net: "mynet"}},
		{"memory-swap", "512m", dockerparam.Options{MemorySwap: 512 << 20}},
		{"--memory-swap", "1.5GB", dockerparam.Options{MemorySwap: 3 << 29}},
		{"memory-swap", "-1", dockerparam.Options{MemorySwap: -1}},
		{"memory-swappiness", "0", dockerparam.Options{MemorySwappiness: ptr(int64(0))}},
		{"memory-swappiness", "100", dockerparam.Options{MemorySwappiness: ptr(int64(100))}},
		{"cpu-shares", "512", dockerparam.Options{CPUShares: 512}},
		{"cpu-shares", "2", dockerparam.Options{CPUShares: 2}},
		{"device-read-bps", "/dev/vda:10mb", dockerparam.Options{DeviceReadBps: []dockerparam.DeviceRate{{Path: "/dev/vda", Rate: 10 << 20}}}},
		{"device-write-bps", "/dev/sdb:1kb", dockerparam.Options{DeviceWriteBps: []dockerparam.DeviceRate{{Path: "/dev/sdb", Rate: 1 << 10}}}},
		{"device-read-iops", "/dev/vda:100", dockerparam.Options{DeviceReadIOps: []dockerparam.DeviceRate{{Path: "/dev/vda", Rate: 100}}}},
		{"device-write-iops", "/dev/vda:50", dockerparam.Options{DeviceWriteIOps: []dockerparam.DeviceRate{{Path: "/dev/vda", Rate: 50}}}},
		{"user", "www-data", dockerparam.Options{User: "www-data"}},
		{"--user", "1000:1000", dockerparam.Options{User: "1000:1000"}},
	}
	for _, tc := range cases {
		var o dockerparam.Options
		if err := o.Add(tc.key, tc.value); err != nil {
			t.Errorf("%s=%q: %v", tc.key, tc.value, err)
			continue
		}
		if !reflect.DeepEqual(o, tc.want) {
			t.Errorf("%s=%q: %+v, want %+v", tc.key, tc.value, o, tc.want)
		}
		if !dockerparam.Known(tc.key) {
			t.Errorf("%s is not known", tc.key)
		}
	}
}

// Repeated ulimits and device limits add up.
func TestRepeatedParameters(t *testing.T) {
	var o dockerparam.Options
	for _, kv := range [][2]string{{"ulimit", "nofile=10"}, {"ulimit", "core=0"}, {"device-read-bps", "/dev/vda:1mb"}, {"device-read-bps", "/dev/vdb:2mb"}} {
		if err := o.Add(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if len(o.Ulimits) != 2 || len(o.DeviceReadBps) != 2 || o.DeviceReadBps[1] != (dockerparam.DeviceRate{Path: "/dev/vdb", Rate: 2 << 20}) {
		t.Errorf("%+v", o)
	}
}

func TestBadParameters(t *testing.T) {
	cases := []struct{ key, value, msg string }{
		{"cap-add", "ALL", "not supported (oom-kill-disable, ulimit, rm, shm-size, ip, net, memory-swap, memory-swappiness, cpu-shares, device-read-bps, device-write-bps, device-read-iops, device-write-iops, user)"},
		{"oom-kill-disable", "yes please", `want true or false, got "yes please"`},
		{"rm", "maybe", `want true or false, got "maybe"`},
		{"ulimit", "nofile", `want name=soft[:hard], got "nofile"`},
		{"ulimit", "nofile=9:1", "soft limit 9 above hard limit 1"},
		{"ulimit", "nofile=x", `soft limit "x" is not a whole number`},
		{"shm-size", "lots", `size "lots": want a number with an optional unit kb, mb or gb`},
		{"ip", "10.9.0", `want an IPv4 address, got "10.9.0"`},
		{"ip", "fd00::1", `want an IPv4 address, got "fd00::1"`},
		{"net", "", `want a docker network name (letters, digits, '_', '.', '-'), got ""`},
		{"net", "container:bcs-nsb.victim.0.1-network", `"container:bcs-nsb.victim.0.1-network" joins the network namespace of container "bcs-nsb.victim.0.1-network", which may be another instance's: not allowed (the containers of an instance share one already)`},
		{"--network", "container:4f3c2a", `"container:4f3c2a" joins the network namespace of container "4f3c2a", which may be another instance's: not allowed (the containers of an instance share one already)`},
		{"net", "ns:/proc/1/ns/net", `want a docker network name (letters, digits, '_', '.', '-'), got "ns:/proc/1/ns/net"`},
		{"memory-swap", "0", `size "0": want more than 0 bytes, or -1 for unlimited swap`},
		{"memory-swap", "-2", `size "-2": want a number with an optional unit kb, mb or gb, or -1 for unlimited swap`},
		{"memory-swap", "1tb", `size "1tb": want a number with an optional unit kb, mb or gb, or -1 for unlimited swap`},
		{"memory-swappiness", "101", `want a whole number from 0 to 100, got "101"`},
		{"memory-swappiness", "-1", `want a whole number from 0 to 100, got "-1"`},
		{"memory-swappiness", "5.5", `want a whole number from 0 to 100, got "5.5"`},
		{"cpu-shares", "1", `want a whole number from 2 to 262144, got "1"`},
		{"cpu-shares", "262145", `want a whole number from 2 to 262144, got "262145"`},
		{"cpu-shares", "1.5", `want a whole number from 2 to 262144, got "1.5"`},
		{"device-read-bps", "/dev/vda", `want <device path under /dev/>:<rate>, rate a size with an optional unit kb, mb or gb; got "/dev/vda"`},
		{"device-read-bps", "vda:1mb", `want <device path under /dev/>:<rate>, rate a size with an optional unit kb, mb or gb; got "vda:1mb"`},
		{"device-write-bps", "/dev/vda:fast", `size "fast": want a number with an optional unit kb, mb or gb`},
		{"device-write-bps", "/dev/vda:0", `size "0": want more than 0 bytes`},
		{"device-read-iops", "/dev/vda:1mb", `rate "1mb": want a whole number above 0`},
		{"device-write-iops", "/dev/vda:0", `rate "0": want a whole number above 0`},
		{"device-write-iops", "/tmp/x:10", `want <device path under /dev/>:<rate>, rate a whole number of operations per second; got "/tmp/x:10"`},
		{"user", "", `want a user name or uid, optionally with :group, got ""`},
		{"user", "a b", `want a user name or uid, optionally with :group, got "a b"`},
		{"user", "1:2:3", `want a user name or uid, optionally with :group, got "1:2:3"`},
	}
	for _, tc := range cases {
		var o dockerparam.Options
		err := o.Add(tc.key, tc.value)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%s=%q: %v, want %q", tc.key, tc.value, err, tc.msg)
		}
		if !reflect.DeepEqual(o, dockerparam.Options{}) {
			t.Errorf("%s=%q: a refused parameter changed the options: %+v", tc.key, tc.value, o)
		}
	}
	if dockerparam.Known("cap-add") {
		t.Error("cap-add is known")
	}
}

// The docker run options that name another container, or a namespace,
// device or capability of the host, reach past the instance: none is a
// parameter a manifest may give (the host's network is the admission
// policy's hostNetwork; privileged, the container's own field).
func TestParametersReachingPastTheInstanceAreRefused(t *testing.T) {
	for _, kv := range [][2]string{
		{"pid", "host"}, {"pid", "container:bcs-x"}, {"ipc", "host"}, {"ipc", "container:bcs-x"}, {"uts", "host"},
		{"userns", "host"}, {"cgroupns", "host"}, {"cgroup-parent", "/"}, {"volumes-from", "bcs-x"}, {"volume", "/:/host"},
		{"mount", "type=bind,src=/,dst=/host"}, {"link", "bcs-x:x"}, {"device", "/dev/sda"}, {"device-cgroup-rule", "a *:* rwm"},
		{"cap-add", "SYS_ADMIN"}, {"security-opt", "seccomp=unconfined"}, {"privileged", "true"}, {"userns-remap", "default"},
		{"net", "container:bcs-x"}, {"network", "container:bcs-x"}, {"--net", "container:bcs-x"},
	} {
		var o dockerparam.Options
		if err := o.Add(kv[0], kv[1]); err == nil {
			t.Errorf("%s=%s accepted: %+v", kv[0], kv[1], o)
		}
	}
}

// Seed 001 network types: USER takes --net from the docker parameters and
// needs it.
func TestNetworkMode(t *testing.T) {
	for mode, want := range map[string]string{"HOST": "host", "BRIDGE": "bridge", "NONE": "none", "": "bridge", "host": "host"} {
		if got, err := (dockerparam.Options{}).NetworkMode(mode); err != nil || got != want {
			t.Errorf("%q → %q %v, want %q", mode, got, err, want)
		}
	}
	o := dockerparam.Options{Net: "overlay-a", IP: "10.1.0.3"}
	if got, err := o.NetworkMode("USER"); err != nil || got != "overlay-a" || o.Address("USER") != "10.1.0.3" {
		t.Errorf("USER → %q %q %v", got, o.Address("USER"), err)
	}
	// The original's rule: ip takes effect in USER mode only.
	if got, err := o.NetworkMode("BRIDGE"); err != nil || got != "bridge" || o.Address("BRIDGE") != "" {
		t.Errorf("BRIDGE with net and ip → %q %q %v, want bridge and no address", got, o.Address("BRIDGE"), err)
	}
	for _, tc := range []struct {
		mode string
		o    dockerparam.Options
		msg  string
	}{
		{"USER", dockerparam.Options{}, "network mode USER needs a net docker parameter"},
		{"MACVLAN", dockerparam.Options{}, `network mode "MACVLAN" (HOST, BRIDGE, NONE, USER)`},
	} {
		if _, err := tc.o.NetworkMode(tc.mode); err == nil || err.Error() != tc.msg {
			t.Errorf("%s %+v: %v, want %q", tc.mode, tc.o, err, tc.msg)
		}
	}
}
