package numa

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// DefaultStatePath is the agent-wide allocation file.
const DefaultStatePath = "/data/bcs/bcs-container-executor/numa-cpusets.json"

// Allocation is what one owner (pod/task) holds; Node is NoNode when only
// CPUs are pinned (a machine of one NUMA node).
type Allocation struct {
	Node int   `json:"node"`
	CPUs []int `json:"cpus"`
}

// state is the allocation file.
type state struct {
	Owners map[string]Allocation `json:"owners"`
}

// Allocator tracks pinned CPUs across every pod of the agent in a state
// file shared by all executors (flock) and surviving their restarts. It
// implements pod.CPUSetPlanner.
type Allocator struct {
	// SysfsRoot is where devices/system/node lives; "" is /sys.
	SysfsRoot string
	// StatePath is the allocation file; "" is DefaultStatePath.
	StatePath string
	// Rand picks nodes and CPUs; nil seeds one from the clock.
	Rand *rand.Rand

	mu sync.Mutex
}

func (a *Allocator) paths() (root, path string) {
	root, path = a.SysfsRoot, a.StatePath
	if root == "" {
		root = "/sys"
	}
	if path == "" {
		path = DefaultStatePath
	}
	return root, path
}

// locked runs f on the state under the process mutex and an exclusive
// flock of <StatePath>.lock, saving it when f reports a change.
func (a *Allocator) locked(f func(*state) (bool, error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, path := a.paths()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %q: %w", path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	st := &state{Owners: map[string]Allocation{}}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, st); err != nil {
			return fmt.Errorf("cpuset state %q: %v: %w", path, err, errdefs.ErrInvalidArgument)
		}
		if st.Owners == nil {
			st.Owners = map[string]Allocation{}
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	changed, err := f(st)
	if err != nil || !changed {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Decide plans req for owner and records a pinning. An owner that already
// holds CPUs gets them again (an executor restarted mid-launch).
func (a *Allocator) Decide(owner string, req Request) (Decision, error) {
	root, _ := a.paths()
	var d Decision
	err := a.locked(func(st *state) (bool, error) {
		if held, ok := st.Owners[owner]; ok {
			d = Decision{Pin: true, Node: held.Node, CPUs: held.CPUs, Reason: ReasonPinned}
			if held.Node == NoNode {
				d.Reason = ReasonSingleNode
			}
			return false, nil
		}
		topo, err := ReadTopology(root)
		if err != nil {
			return false, err
		}
		used := map[int]bool{}
		for _, al := range st.Owners {
			for _, c := range al.CPUs {
				used[c] = true
			}
		}
		if a.Rand == nil {
			a.Rand = rand.New(rand.NewSource(time.Now().UnixNano()))
		}
		if d, err = Plan(topo, used, req, a.Rand); err != nil {
			return false, fmt.Errorf("pin %g CPUs for %q: %w", req.CPUs, owner, err)
		}
		if !d.Pin {
			return false, nil
		}
		st.Owners[owner] = Allocation{Node: d.Node, CPUs: d.CPUs}
		return true, nil
	})
	return d, err
}

// Plan is pod.CPUSetPlanner: docker's cpuset-cpus and cpuset-mems for
// owner, "" when the task runs unpinned (cpuset-mems "" when no memory
// node is set).
func (a *Allocator) Plan(owner string, cpus float64, pin bool) (string, string, error) {
	d, err := a.Decide(owner, Request{CPUs: cpus, Pin: pin})
	if err != nil || !d.Pin {
		return "", "", err
	}
	mems := ""
	if d.Node != NoNode {
		mems = strconv.Itoa(d.Node)
	}
	return FormatCPUList(d.CPUs), mems, nil
}

// Release frees what owner holds; releasing nothing is not an error.
func (a *Allocator) Release(owner string) error {
	return a.locked(func(st *state) (bool, error) {
		_, ok := st.Owners[owner]
		delete(st.Owners, owner)
		return ok, nil
	})
}

// Allocations returns every owner's allocation, for status pages and tests.
func (a *Allocator) Allocations() (map[string]Allocation, error) {
	out := map[string]Allocation{}
	err := a.locked(func(st *state) (bool, error) {
		for k, v := range st.Owners {
			out[k] = v
		}
		return false, nil
	})
	return out, err
}
