package dockerparam

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Keys are the supported parameter keys, as docker run spells the options
// (a leading "--" is accepted; "network" is "net").
var Keys = []string{
	"oom-kill-disable", "ulimit", "rm", "shm-size", "ip", "net",
	"memory-swap", "memory-swappiness", "cpu-shares",
	"device-read-bps", "device-write-bps", "device-read-iops", "device-write-iops", "user",
}

// userPattern is docker's --user: a name or uid and an optional group.
var userPattern = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*(:[A-Za-z0-9_.][A-Za-z0-9_.-]*)?$`)

// Docker's bounds on --cpu-shares (cgroup v1 cpu.shares).
const (
	MinCPUShares = 2
	MaxCPUShares = 262144
)

// Options are the docker run options a container's parameters set. Zero
// values leave docker's (or the resources') defaults.
type Options struct {
	OOMKillDisable *bool
	Ulimits        []Ulimit
	AutoRemove     bool
	ShmSize        int64  // bytes
	IP             string // the container's IPv4 address on the USER network
	Net            string // the docker network of network mode USER
	// MemorySwap is memory plus swap in bytes, -1 unlimited. Seed 001: a
	// value below the memory limit has no effect.
	MemorySwap       int64
	MemorySwappiness *int64 // 0..100
	CPUShares        int64  // overrides requests.cpu × 1024
	DeviceReadBps    []DeviceRate
	DeviceWriteBps   []DeviceRate
	DeviceReadIOps   []DeviceRate
	DeviceWriteIOps  []DeviceRate
	// User is who the container runs as, "name" or "uid", either with
	// ":group"; "" is the image's user (the namespace's admission policy
	// decides whether either is taken).
	User string
}

// Ulimit is one --ulimit.
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

// DeviceRate is one --device-{read,write}-{bps,iops}: bytes or operations
// per second on a block device.
type DeviceRate struct {
	Path string
	Rate int64
}

// Normalize is key as Keys spell it.
func Normalize(key string) string {
	key = strings.TrimLeft(key, "-")
	if key == "network" {
		return "net"
	}
	return key
}

// Known tells whether key is supported.
func Known(key string) bool {
	for _, k := range Keys {
		if k == Normalize(key) {
			return true
		}
	}
	return false
}

// Add reads one parameter into o, which a refused one leaves as it was.
// The error says what is wrong with the key or the value without naming
// them; the caller names the field and classes the error.
func (o *Options) Add(key, value string) error {
	switch Normalize(key) {
	case "oom-kill-disable":
		b, err := parseBool(value)
		if err != nil {
			return err
		}
		o.OOMKillDisable = &b
	case "rm":
		b, err := parseBool(value)
		if err != nil {
			return err
		}
		o.AutoRemove = b
	case "ulimit":
		u, err := parseUlimit(value)
		if err != nil {
			return err
		}
		o.Ulimits = append(o.Ulimits, u)
	case "shm-size": // 0: docker's default
		n, err := ParseSize(value)
		if err != nil {
			return err
		}
		o.ShmSize = n
	case "ip":
		if ip := net.ParseIP(value); ip == nil || ip.To4() == nil {
			return fmt.Errorf("want an IPv4 address, got %q", value)
		}
		o.IP = value
	case "net":
		if err := checkNetwork(value); err != nil {
			return err
		}
		o.Net = value
	case "memory-swap":
		if value == "-1" {
			o.MemorySwap = -1
			return nil
		}
		n, err := positiveSize(value)
		if err != nil {
			return fmt.Errorf("%v, or -1 for unlimited swap", err)
		}
		o.MemorySwap = n
	case "memory-swappiness":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || n > 100 {
			return fmt.Errorf("want a whole number from 0 to 100, got %q", value)
		}
		o.MemorySwappiness = &n
	case "cpu-shares":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < MinCPUShares || n > MaxCPUShares {
			return fmt.Errorf("want a whole number from %d to %d, got %q", MinCPUShares, MaxCPUShares, value)
		}
		o.CPUShares = n
	case "device-read-bps", "device-write-bps":
		d, err := parseDeviceRate(value, positiveSize, "a size with an optional unit kb, mb or gb")
		if err != nil {
			return err
		}
		if Normalize(key) == "device-read-bps" {
			o.DeviceReadBps = append(o.DeviceReadBps, d)
		} else {
			o.DeviceWriteBps = append(o.DeviceWriteBps, d)
		}
	case "device-read-iops", "device-write-iops":
		d, err := parseDeviceRate(value, positiveCount, "a whole number of operations per second")
		if err != nil {
			return err
		}
		if Normalize(key) == "device-read-iops" {
			o.DeviceReadIOps = append(o.DeviceReadIOps, d)
		} else {
			o.DeviceWriteIOps = append(o.DeviceWriteIOps, d)
		}
	case "user":
		if !userPattern.MatchString(value) {
			return fmt.Errorf("want a user name or uid, optionally with :group, got %q", value)
		}
		o.User = value
	default:
		return fmt.Errorf("not supported (%s)", strings.Join(Keys, ", "))
	}
	return nil
}

// The network modes of seed 001 (TaskInfo.Container.Docker.Network).
const (
	NetworkHost   = "HOST"
	NetworkBridge = "BRIDGE"
	NetworkNone   = "NONE"
	NetworkUser   = "USER"
)

// NetworkMode is docker's network mode of a container in seed 001's mode
// (CNM): USER takes the net parameter, which it needs.
func (o Options) NetworkMode(mode string) (string, error) {
	switch strings.ToUpper(mode) {
	case NetworkHost:
		return "host", nil
	case NetworkBridge, "":
		return "bridge", nil
	case NetworkNone:
		return "none", nil
	case NetworkUser:
		if o.Net == "" {
			return "", fmt.Errorf("network mode USER needs a net docker parameter")
		}
		return o.Net, nil
	}
	return "", fmt.Errorf("network mode %q (HOST, BRIDGE, NONE, USER)", mode)
}

// Address is the address the ip parameter asks for in network mode mode:
// it takes effect in USER mode only (the original's rule: docker gives a
// chosen address only on a user-defined network) and is ignored elsewhere.
func (o Options) Address(mode string) string {
	if strings.ToUpper(mode) != NetworkUser {
		return ""
	}
	return o.IP
}

// networkName is docker's rule for a network's name (libnetwork's
// restricted name characters); docker's other --network values have a
// colon: container:<name|id> joins another container's network namespace.
var networkName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// checkNetwork refuses a net value that is not a network's name. A
// container named there may be any instance's, of any namespace (their
// names are predictable): joining its network namespace reaches its
// loopback services and traffic. An instance's own containers share one
// network namespace already, so no instance needs it.
func checkNetwork(value string) error {
	if ref, ok := strings.CutPrefix(value, "container:"); ok {
		return fmt.Errorf("%q joins the network namespace of container %q, which may be another instance's: not allowed (the containers of an instance share one already)", value, ref)
	}
	if !networkName.MatchString(value) {
		return fmt.Errorf("want a docker network name (letters, digits, '_', '.', '-'), got %q", value)
	}
	return nil
}

func parseBool(s string) (bool, error) {
	if s == "" {
		return true, nil // a bare flag
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("want true or false, got %q", s)
	}
	return b, nil
}

// parseUlimit reads "name=soft[:hard]".
func parseUlimit(s string) (Ulimit, error) {
	name, limits, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return Ulimit{}, fmt.Errorf("want name=soft[:hard], got %q", s)
	}
	softS, hardS, hasHard := strings.Cut(limits, ":")
	soft, err := strconv.ParseInt(softS, 10, 64)
	if err != nil {
		return Ulimit{}, fmt.Errorf("soft limit %q is not a whole number", softS)
	}
	hard := soft
	if hasHard {
		if hard, err = strconv.ParseInt(hardS, 10, 64); err != nil {
			return Ulimit{}, fmt.Errorf("hard limit %q is not a whole number", hardS)
		}
	}
	if soft > hard {
		return Ulimit{}, fmt.Errorf("soft limit %d above hard limit %d", soft, hard)
	}
	return Ulimit{Name: name, Soft: soft, Hard: hard}, nil
}

var sizeRE = regexp.MustCompile(`^(?i)(\d+(?:\.\d+)?)\s*([kmg]?)b?$`)

// ParseSize reads a byte size with an optional unit k, m, g (kb, mb, gb;
// powers of 1024), as docker's --shm-size, --memory-swap and
// --device-*-bps take it.
func ParseSize(s string) (int64, error) {
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

func positiveSize(s string) (int64, error) {
	n, err := ParseSize(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("size %q: want more than 0 bytes", s)
	}
	return n, err
}

func positiveCount(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("rate %q: want a whole number above 0", s)
	}
	return n, nil
}

// parseDeviceRate reads docker's "path:rate", path a device under /dev.
func parseDeviceRate(s string, rate func(string) (int64, error), want string) (DeviceRate, error) {
	path, r, ok := strings.Cut(s, ":")
	if !ok || !strings.HasPrefix(path, "/dev/") {
		return DeviceRate{}, fmt.Errorf("want <device path under /dev/>:<rate>, rate %s; got %q", want, s)
	}
	n, err := rate(r)
	if err != nil {
		return DeviceRate{}, err
	}
	return DeviceRate{Path: path, Rate: n}, nil
}
