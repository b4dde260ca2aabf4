package devcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// A cluster of real executors (process mode) outlives its own process,
// as a Mesos master and its agents do: the master keeps a registry of its
// frameworks and agents (like src/master/registrar.cpp), each agent a
// checkpoint of its containers (checkpoint.go, like src/slave/state.cpp),
// both under <WorkDir>/meta; a cluster started again on the same work dir
// recovers them (recover.go). Simulated mode keeps nothing: its tasks do
// not outlive the process anyway.

// registry is what the master keeps of its cluster across restarts: its
// agents with the IDs and executor API endpoints their executors know
// them by (Mesos' Registry.slaves), and the frameworks it knows, which
// subscribe again as a failover (a Mesos master learns those back from
// its agents' checkpointed framework.info as they reregister).
type registry struct {
	Frameworks []mesos.FrameworkInfo `json:"frameworks"`
	Agents     []registeredAgent     `json:"agents"`
}

type registeredAgent struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	Endpoint string `json:"endpoint"` // host:port of its executor API
}

// durable reports whether the cluster keeps its registry and checkpoints.
func (m *master) durable() bool { return m.cfg.ExecutorMode == ExecutorProcess }

// metaDir holds the registry and the agents' checkpoints. Only the
// cluster's user reads it: the task infos it keeps carry the instances'
// secrets.
func (m *master) metaDir() string { return filepath.Join(m.cfg.WorkDir, "meta") }

func (m *master) registryPath() string { return filepath.Join(m.metaDir(), "registry.json") }

// loadRegistry reads the registry of the cluster's last run; none is an
// empty one.
func (m *master) loadRegistry() (registry, error) {
	var reg registry
	if err := os.MkdirAll(m.metaDir(), 0o700); err != nil {
		return reg, fmt.Errorf("dev cluster meta dir: %w", err)
	}
	if err := os.Chmod(m.metaDir(), 0o700); err != nil {
		return reg, fmt.Errorf("dev cluster meta dir: %w", err)
	}
	data, err := os.ReadFile(m.registryPath())
	if errors.Is(err, fs.ErrNotExist) {
		return reg, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &reg)
	}
	if err != nil {
		return reg, fmt.Errorf("dev cluster registry %q: %v (remove it to start without the last run's frameworks and agent IDs): %w",
			m.registryPath(), err, errdefs.ErrInvalidArgument)
	}
	return reg, nil
}

// saveRegistry writes the master's frameworks and agents, as they are
// now. Caller holds m.mu.
func (m *master) saveRegistry() {
	if !m.durable() || m.recovering {
		return
	}
	reg := registry{Frameworks: []mesos.FrameworkInfo{}, Agents: []registeredAgent{}}
	for _, fw := range m.frameworks {
		reg.Frameworks = append(reg.Frameworks, fw.info)
	}
	sort.Slice(reg.Frameworks, func(i, j int) bool { return reg.Frameworks[i].ID.Value < reg.Frameworks[j].ID.Value })
	for _, a := range m.agentOrder {
		reg.Agents = append(reg.Agents, registeredAgent{ID: a.id, Hostname: a.info.Hostname, Endpoint: a.endpoint})
	}
	if err := writeFileAtomically(m.registryPath(), &reg); err != nil {
		m.log().Warn("registry not saved: a restart would not recover this state", "path", m.registryPath(), "err", err)
	}
}

// writeFileAtomically writes v as JSON to path (mode 0600) through a
// temporary file renamed over it, so that a reader, or the next run after
// a kill -9, sees the old contents or the new, never a torn file. Like a
// Mesos agent's checkpoints it does not fsync: it survives the process,
// not a crash of the machine.
func writeFileAtomically(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
