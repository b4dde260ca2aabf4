package pod

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// The CNM network modes of seed 001 (TaskInfo.Container.Docker.Network).
const (
	NetworkHost   = "HOST"
	NetworkBridge = "BRIDGE"
	NetworkNone   = "NONE"
	NetworkUser   = "USER"
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
	LabelPod  = "io.bcs.pod"  // the pod ID
	LabelTask = "io.bcs.task" // the task ID; "" for the network container
	LabelRole = "io.bcs.role" // "business" or "network"
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
// task's own. A task value that is exactly "$NAME" or "${NAME}" of an
// injected variable takes that variable's injected value, in every network
// mode (seed 001, one level: the injected value, never another user
// variable).
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
		}
		out = append(out, ev.Name+"="+value)
	}
	return out
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

// dockerParams are the manifest's docker parameters, parsed.
type dockerParams struct {
	oomKillDisable *bool
	ulimits        []docker.ULimit
	autoRemove     bool
	shmSize        int64
	ip             string
	net            string
}

func parseParams(params []proto.Parameter) (dockerParams, error) {
	var p dockerParams
	for _, kv := range params {
		key := strings.TrimLeft(kv.Key, "-")
		bad := func(err error) error {
			return fmt.Errorf("docker parameter %q=%q: %v: %w", kv.Key, kv.Value, err, errdefs.ErrInvalidArgument)
		}
		switch key {
		case "oom-kill-disable":
			b, err := parseBool(kv.Value)
			if err != nil {
				return p, bad(err)
			}
			p.oomKillDisable = &b
		case "rm":
			b, err := parseBool(kv.Value)
			if err != nil {
				return p, bad(err)
			}
			p.autoRemove = b
		case "ulimit":
			u, err := parseUlimit(kv.Value)
			if err != nil {
				return p, bad(err)
			}
			p.ulimits = append(p.ulimits, u)
		case "shm-size":
			n, err := parseSize(kv.Value)
			if err != nil {
				return p, bad(err)
			}
			p.shmSize = n
		case "ip":
			p.ip = kv.Value
		case "net", "network":
			p.net = kv.Value
		default:
			return p, fmt.Errorf("docker parameter %q is not supported (oom-kill-disable, ulimit, rm, shm-size, ip, net): %w", kv.Key, errdefs.ErrInvalidArgument)
		}
	}
	return p, nil
}

func parseBool(s string) (bool, error) {
	if s == "" {
		return true, nil // a bare flag
	}
	return strconv.ParseBool(s)
}

// parseUlimit reads "name=soft[:hard]".
func parseUlimit(s string) (docker.ULimit, error) {
	name, limits, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return docker.ULimit{}, fmt.Errorf("want name=soft[:hard]")
	}
	softS, hardS, hasHard := strings.Cut(limits, ":")
	soft, err := strconv.ParseInt(softS, 10, 64)
	if err != nil {
		return docker.ULimit{}, err
	}
	hard := soft
	if hasHard {
		if hard, err = strconv.ParseInt(hardS, 10, 64); err != nil {
			return docker.ULimit{}, err
		}
	}
	if soft > hard {
		return docker.ULimit{}, fmt.Errorf("soft limit %d above hard limit %d", soft, hard)
	}
	return docker.ULimit{Name: name, Soft: soft, Hard: hard}, nil
}

var sizeRE = regexp.MustCompile(`^(?i)(\d+(?:\.\d+)?)\s*([kmg]?)b?$`)

// parseSize reads a byte size with an optional unit k, m, g (kb, mb, gb;
// powers of 1024), as docker's --shm-size and --device-*-bps do.
func parseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number with an optional unit kb, mb or gb", s)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	switch strings.ToLower(m[2]) {
	case "k":
		n *= 1 << 10
	case "m":
		n *= 1 << 20
	case "g":
		n *= 1 << 30
	}
	return int64(n), nil
}

// applyResources sets cpu-shares, CFS quota, memory, swap, swappiness and
// device I/O limits (seed 001 resource rules) on hc.
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
	// memory-swap below memory means no limit (seed 001).
	if r.MemSwapMB > 0 && hc.Memory > 0 && int64(r.MemSwapMB*(1<<20)) >= hc.Memory {
		hc.MemorySwap = int64(r.MemSwapMB * (1 << 20))
	}
	if r.Swappiness != nil {
		if *r.Swappiness < 0 || *r.Swappiness > 100 {
			return fmt.Errorf("memory-swappiness %d outside 0..100: %w", *r.Swappiness, errdefs.ErrInvalidArgument)
		}
		s := int64(*r.Swappiness)
		hc.MemorySwappiness = &s
	}
	for _, l := range r.DeviceLimit {
		if l.Device == "" {
			return fmt.Errorf("device limit %q without a device: %w", l.Kind, errdefs.ErrInvalidArgument)
		}
		var (
			n   int64
			err error
		)
		if strings.HasSuffix(l.Kind, "-iops") {
			n, err = strconv.ParseInt(l.Rate, 10, 64)
		} else {
			n, err = parseSize(l.Rate)
		}
		if err != nil || n <= 0 {
			return fmt.Errorf("device limit %s %s rate %q: %w", l.Kind, l.Device, l.Rate, errdefs.ErrInvalidArgument)
		}
		bl := docker.BlockLimit{Path: l.Device, Rate: n}
		switch l.Kind {
		case "read-bps":
			hc.BlkioDeviceReadBps = append(hc.BlkioDeviceReadBps, bl)
		case "write-bps":
			hc.BlkioDeviceWriteBps = append(hc.BlkioDeviceWriteBps, bl)
		case "read-iops":
			hc.BlkioDeviceReadIOps = append(hc.BlkioDeviceReadIOps, bl)
		case "write-iops":
			hc.BlkioDeviceWriteIOps = append(hc.BlkioDeviceWriteIOps, bl)
		default:
			return fmt.Errorf("device limit kind %q (read-bps, write-bps, read-iops, write-iops): %w", l.Kind, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

// cnmNetworkMode is the docker NetworkMode of the network-owning container
// in CNM mode (seed 001: USER takes --net from the docker parameters).
func cnmNetworkMode(mode string, params dockerParams) (string, error) {
	switch strings.ToUpper(mode) {
	case NetworkHost:
		return "host", nil
	case NetworkBridge, "":
		return "bridge", nil
	case NetworkNone:
		return "none", nil
	case NetworkUser:
		if params.net == "" {
			return "", fmt.Errorf("network mode USER needs a net docker parameter: %w", errdefs.ErrInvalidArgument)
		}
		return params.net, nil
	}
	return "", fmt.Errorf("network mode %q (HOST, BRIDGE, NONE, USER): %w", mode, errdefs.ErrInvalidArgument)
}

// binds turns volumes into docker binds. An empty host path is a
// pod-private directory under sandbox; $BCS_POD_ID in a host path is the
// pod ID. Directories the pod owns are created.
func binds(vols []proto.Volume, podID, sandbox string) ([]string, error) {
	var out []string
	for _, v := range vols {
		if !filepath.IsAbs(v.MountPath) {
			return nil, fmt.Errorf("volume mount path %q is not absolute: %w", v.MountPath, errdefs.ErrInvalidArgument)
		}
		host := strings.ReplaceAll(v.HostPath, "$"+EnvPodID, podID)
		host = strings.ReplaceAll(host, "${"+EnvPodID+"}", podID)
		if host == "" {
			name := strings.Trim(strings.ReplaceAll(filepath.Clean(v.MountPath), "/", "_"), "_")
			host = filepath.Join(sandbox, "volumes", podID, name)
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
