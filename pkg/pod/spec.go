package pod

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/dockerparam"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The CNM network modes of seed 001 (TaskInfo.Container.Docker.Network).
const (
	NetworkHost   = dockerparam.NetworkHost
	NetworkBridge = dockerparam.NetworkBridge
	NetworkNone   = dockerparam.NetworkNone
	NetworkUser   = dockerparam.NetworkUser
)

// The environment variables every container gets (seed 001).
const (
	EnvHost     = "HOST"          // CNI: the container IP; CNM: the node address
	EnvCNIName  = "BCS_CNI_NAME"  // CNI: the container's interface name; CNM: empty
	EnvNodeAddr = "BCS_NODE_ADDR" // the agent's address
	EnvPodID    = "BCS_POD_ID"    // the pod ID
	envPortPfx  = "PORT_"         // PORT_<name>: the port of each named port
)

// Labels set on every container the package creates.
const (
	LabelPod       = "io.bcs.pod"       // the pod ID
	LabelFramework = "io.bcs.framework" // the Mesos framework ID
	LabelTask      = "io.bcs.task"      // the task ID; "" for the network container
	LabelRole      = "io.bcs.role"      // "business" or "network"
)

// minMemory is docker's lower bound for --memory (seed 001: 最小4M).
const minMemory = 4 << 20

// cfsPeriod is the CFS period the CPU limit is expressed in.
const cfsPeriod = 100000

// CPUSet is a cpuset-cpus / cpuset-mems pair chosen by a CPUSetPlanner.
type CPUSet struct {
	CPUs string // e.g. "0-3,6"
	Mems string // NUMA nodes, e.g. "1"
}

// containerEnv is what the pod injects into a container's environment.
type containerEnv struct {
	podID    string
	nodeAddr string
	hostIP   string // HOST
	cniName  string // BCS_CNI_NAME; "" in CNM mode
}

// injected returns the injected variables in a fixed order, PORT_<name>
// included.
func (e containerEnv) injected(ports []proto.Port) [][2]string {
	vars := [][2]string{
		{EnvHost, e.hostIP},
		{EnvNodeAddr, e.nodeAddr},
		{EnvPodID, e.podID},
		{EnvCNIName, e.cniName},
	}
	for _, p := range ports {
		if p.Name == "" {
			continue
		}
		vars = append(vars, [2]string{envPortPfx + p.Name, strconv.Itoa(exportedPort(p))})
	}
	return vars
}

// buildEnv is the container environment: the injected variables, then the
// task's own. A task value that is exactly "$NAME" of an injected variable
// takes that variable's injected value, in every network mode (seed 001,
// one level: the injected value, never another user variable); so does
// each "${NAME}" within a value, which the scheduler's manifest checks
// let through (manifest.ExecutorVariables).
func buildEnv(e containerEnv, spec *proto.TaskSpec) []string {
	vars := e.injected(spec.Ports)
	lookup := make(map[string]string, len(vars))
	out := make([]string, 0, len(vars)+len(spec.Env))
	for _, kv := range vars {
		lookup[kv[0]] = kv[1]
		out = append(out, kv[0]+"="+kv[1])
	}
	for _, ev := range spec.Env {
		value := ev.Value
		if v, found := lookup[referenced(value)]; found {
			value = v
		} else {
			value = replaceBraced(value, lookup)
		}
		out = append(out, ev.Name+"="+value)
	}
	return out
}

// replaceBraced replaces each "${NAME}" of value naming a variable of
// vars; the rest of value stays as written.
func replaceBraced(value string, vars map[string]string) string {
	var b strings.Builder
	for {
		start := strings.Index(value, "${")
		if start < 0 {
			break
		}
		length := strings.IndexByte(value[start:], '}')
		if length < 0 {
			break
		}
		v, found := vars[value[start+2:start+length]]
		if !found {
			v = value[start : start+length+1]
		}
		b.WriteString(value[:start])
		b.WriteString(v)
		value = value[start+length+1:]
	}
	b.WriteString(value)
	return b.String()
}

// referenced is the variable name a value is exactly a reference to,
// "$NAME" or "${NAME}"; "" when it is not one.
func referenced(value string) string {
	name, ok := strings.CutPrefix(value, "$")
	if !ok {
		return ""
	}
	if inner, braced := strings.CutPrefix(name, "{"); braced {
		if name, ok = strings.CutSuffix(inner, "}"); !ok {
			return ""
		}
	}
	return name
}

// exportedPort is the PORT_<name> value: the host port the scheduler
// allocated, else the container port.
func exportedPort(p proto.Port) int {
	if p.HostPort > 0 {
		return p.HostPort
	}
	return p.ContainerPort
}

// containerPort is the port the process listens on inside the container.
func containerPort(p proto.Port) int {
	if p.ContainerPort > 0 {
		return p.ContainerPort
	}
	return p.HostPort
}

func portKey(p proto.Port) docker.Port {
	protocol := "tcp"
	if strings.EqualFold(p.Protocol, "udp") {
		protocol = "udp"
	}
	return docker.Port(fmt.Sprintf("%d/%s", containerPort(p), protocol))
}

// commandFor applies seed 001's Value/Arguments rules given the image's
// entrypoint: with an image entrypoint, Value replaces it and Arguments
// follow, or Arguments alone become its arguments; without one, Value is
// required and Value+Arguments is the command.
func commandFor(c *proto.ContainerSpec, imageEntrypoint []string) (entrypoint, cmd []string, err error) {
	if len(imageEntrypoint) > 0 {
		if c.Command != "" {
			return []string{c.Command}, c.Args, nil
		}
		return nil, c.Args, nil
	}
	if c.Command == "" {
		return nil, nil, fmt.Errorf("image %q has no entrypoint and the task has no command: %w", c.Image, errdefs.ErrInvalidArgument)
	}
	return nil, append([]string{c.Command}, c.Args...), nil
}

// parseParams reads a container's docker parameters with the parser the
// scheduler validates manifests with.
func parseParams(params []proto.Parameter) (dockerparam.Options, error) {
	var o dockerparam.Options
	for _, kv := range params {
		if err := o.Add(kv.Key, kv.Value); err != nil {
			return o, fmt.Errorf("docker parameter %q=%q: %v: %w", kv.Key, kv.Value, err, errdefs.ErrInvalidArgument)
		}
	}
	return o, nil
}

// networkMode is docker's network mode of a container in seed 001's mode
// (CNM), USER taking the net parameter.
func networkMode(mode string, params dockerparam.Options) (string, error) {
	m, err := params.NetworkMode(mode)
	if err != nil {
		return "", fmt.Errorf("%v: %w", err, errdefs.ErrInvalidArgument)
	}
	return m, nil
}

// applyParams sets what the docker parameters ask on hc, after
// applyResources: cpu-shares overrides the requested cpus' shares.
func applyParams(hc *docker.HostConfig, o dockerparam.Options) {
	hc.OOMKillDisable = o.OOMKillDisable
	for _, u := range o.Ulimits {
		hc.Ulimits = append(hc.Ulimits, docker.ULimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	hc.AutoRemove = o.AutoRemove
	hc.ShmSize = o.ShmSize
	if o.CPUShares > 0 {
		hc.CPUShares = o.CPUShares
	}
	if swap := swapLimit(hc.Memory, o.MemorySwap); swap != 0 {
		hc.MemorySwap = swap
	}
	hc.MemorySwappiness = o.MemorySwappiness
	blkio := func(rates []dockerparam.DeviceRate) []docker.BlockLimit {
		var out []docker.BlockLimit
		for _, r := range rates {
			out = append(out, docker.BlockLimit{Path: r.Path, Rate: r.Rate})
		}
		return out
	}
	hc.BlkioDeviceReadBps, hc.BlkioDeviceWriteBps = blkio(o.DeviceReadBps), blkio(o.DeviceWriteBps)
	hc.BlkioDeviceReadIOps, hc.BlkioDeviceWriteIOps = blkio(o.DeviceReadIOps), blkio(o.DeviceWriteIOps)
}

// swapLimit is docker's memory-swap for a memory limit and an asked swap
// limit (bytes, -1 unlimited): seed 001, one below memory has no effect
// (0: docker's default).
func swapLimit(memory, swap int64) int64 {
	if swap == -1 || (swap > 0 && memory > 0 && swap >= memory) {
		return swap
	}
	return 0
}

// applyResources sets cpu-shares, CFS quota, memory and swap (seed 001
// resource rules) on hc.
func applyResources(hc *docker.HostConfig, r proto.Resources) error {
	if r.CPUs > 0 {
		hc.CPUShares = int64(math.Round(r.CPUs * 1024))
	}
	if r.CPULimit > 0 {
		hc.CPUPeriod = cfsPeriod
		hc.CPUQuota = int64(math.Round(r.CPULimit * cfsPeriod))
	}
	mem := r.MemLimitMB
	if mem <= 0 {
		mem = r.MemMB
	}
	if mem > 0 {
		hc.Memory = int64(mem * (1 << 20))
		if hc.Memory < minMemory {
			return fmt.Errorf("memory %gMB below docker's minimum of 4MB: %w", mem, errdefs.ErrInvalidArgument)
		}
	}
	hc.MemorySwap = swapLimit(hc.Memory, int64(r.MemSwapMB*(1<<20)))
	return nil
}

// binds turns volumes into docker binds. An empty host path is a
// pod-private directory under sandbox (privateVolume); $BCS_POD_ID in a
// host path is the pod ID. Directories the pod owns are created.
func binds(vols []proto.Volume, podID, sandbox string) ([]string, error) {
	var out []string
	for _, v := range vols {
		if !filepath.IsAbs(v.MountPath) {
			return nil, fmt.Errorf("volume mount path %q is not absolute: %w", v.MountPath, errdefs.ErrInvalidArgument)
		}
		host := strings.ReplaceAll(v.HostPath, "$"+EnvPodID, podID)
		host = strings.ReplaceAll(host, "${"+EnvPodID+"}", podID)
		if host == "" {
			host = privateVolume(v, podID, sandbox)
			if err := os.MkdirAll(host, 0o755); err != nil {
				return nil, fmt.Errorf("pod volume %q: %w", host, err)
			}
		}
		b := host + ":" + v.MountPath
		if v.ReadOnly {
			b += ":ro"
		}
		out = append(out, b)
	}
	return out, nil
}

// privateVolume is the directory under sandbox of a volume without a
// host path.
func privateVolume(v proto.Volume, podID, sandbox string) string {
	name := strings.Trim(strings.ReplaceAll(filepath.Clean(v.MountPath), "/", "_"), "_")
	return filepath.Join(sandbox, "volumes", podID, name)
}

// portBindings publishes every task's ports on the network owner (joined
// containers cannot publish). Only BRIDGE publishes; hostIP "" binds all
// host addresses.
func portBindings(specs []*proto.TaskSpec, hostIP string) (map[docker.Port]struct{}, map[docker.Port][]docker.PortBinding) {
	exposed := map[docker.Port]struct{}{}
	bindings := map[docker.Port][]docker.PortBinding{}
	for _, s := range specs {
		for _, p := range s.Ports {
			if containerPort(p) <= 0 {
				continue
			}
			k := portKey(p)
			exposed[k] = struct{}{}
			hp := ""
			if p.HostPort > 0 {
				hp = strconv.Itoa(p.HostPort)
			}
			bindings[k] = append(bindings[k], docker.PortBinding{HostIP: hostIP, HostPort: hp})
		}
	}
	return exposed, bindings
}
