package pod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/libcni"
	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// record is the sandbox state file of a pod: everything a restarted
// executor needs to tear down what a crashed one left behind. It is
// rewritten (atomically) before each resource is created.
type record struct {
	PodID            string     `json:"podID"`
	Containers       []string   `json:"containers,omitempty"` // business containers, group order
	NetworkContainer string     `json:"networkContainer,omitempty"`
	CNI              *cniRecord `json:"cni,omitempty"`
	CPUSetOwners     []string   `json:"cpusetOwners,omitempty"`
}

// cniRecord is a CNI attachment to delete.
type cniRecord struct {
	ConfList     json.RawMessage  `json:"confList"`
	PluginDirs   []string         `json:"pluginDirs"`
	CacheDir     string           `json:"cacheDir,omitempty"`
	ContainerID  string           `json:"containerID"`
	NetNS        string           `json:"netns"`
	IfName       string           `json:"ifName"`
	PortMappings []map[string]any `json:"portMappings,omitempty"`
}

const recordPrefix = "bcs-pod-"

func recordPath(sandbox, podID string) string {
	return filepath.Join(sandbox, recordPrefix+podID+".json")
}

// record snapshots what the pod has created so far.
func (p *Pod) record() *record {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &record{PodID: p.cfg.PodID, CNI: p.cni}
	for _, t := range p.tasks {
		if t.containerID != "" {
			r.Containers = append(r.Containers, t.containerID)
		}
		if t.spare != "" {
			r.Containers = append(r.Containers, t.spare)
		}
		if t.cpuset != nil {
			r.CPUSetOwners = append(r.CPUSetOwners, p.cpusetOwner(t))
		}
	}
	r.NetworkContainer = p.netContainer
	return r
}

func (p *Pod) saveRecord() error {
	r := p.record()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := recordPath(p.cfg.SandboxDir, p.cfg.PodID)
	if err := os.MkdirAll(p.cfg.SandboxDir, 0o755); err != nil {
		return fmt.Errorf("pod state file: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("pod state file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pod state file: %w", err)
	}
	return nil
}

// Cleanup tears down every pod whose state file is in cfg.SandboxDir: what
// an executor that crashed (or was killed) left behind. Business
// containers go first, then the CNI attachment, then the network
// container; cpusets are released through cfg.CPUSets. A state file is
// removed only once its pod is fully torn down. Call it before New when an
// executor starts in a sandbox that may hold a previous run's pods. It
// returns how many state files it found.
func Cleanup(ctx context.Context, cfg Config) (int, error) {
	if cfg.Docker == nil || cfg.SandboxDir == "" {
		return 0, fmt.Errorf("cleanup needs a docker client and a sandbox directory: %w", errdefs.ErrInvalidArgument)
	}
	cfg.CNI = cfg.CNI.withDefaults()
	paths, err := filepath.Glob(filepath.Join(cfg.SandboxDir, recordPrefix+"*.json"))
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r record
		if err := json.Unmarshal(data, &r); err != nil {
			errs = append(errs, fmt.Errorf("pod state file %q: %v: %w", path, err, errdefs.ErrInvalidArgument))
			continue
		}
		c := cfg
		c.PodID = r.PodID
		errs = append(errs, teardown(ctx, c, &r))
	}
	return len(paths), errors.Join(errs...)
}

// teardown removes what r names, in order, and then the state file.
func teardown(ctx context.Context, cfg Config, r *record) error {
	var errs []error
	remove := func(id string) {
		err := cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true, Context: ctx})
		var nsc *docker.NoSuchContainer
		if err != nil && !errors.As(err, &nsc) && !strings.Contains(err.Error(), "already in progress") {
			errs = append(errs, fmt.Errorf("remove container %q: %w", id, err))
		}
	}
	// Business containers: the recorded ones and any labelled with the pod
	// (a crash between create and the record update).
	business := append([]string(nil), r.Containers...)
	network := []string{}
	if r.NetworkContainer != "" {
		network = append(network, r.NetworkContainer)
	}
	if list, err := cfg.Docker.ListContainers(docker.ListContainersOptions{
		All: true, Filters: map[string][]string{"label": {LabelPod + "=" + r.PodID, LabelFramework + "=" + cfg.Framework}}, Context: ctx,
	}); err == nil {
		for _, c := range list {
			if c.Labels[LabelRole] == "network" {
				network = appendNew(network, c.ID)
			} else {
				business = appendNew(business, c.ID)
			}
		}
	} else {
		errs = append(errs, fmt.Errorf("list containers of pod %q: %v: %w", r.PodID, err, errdefs.ErrUnavailable))
	}
	for _, id := range business {
		remove(id)
	}
	cniErr := error(nil)
	if r.CNI != nil {
		cniErr = cniDel(ctx, cfg, r.CNI)
		errs = append(errs, cniErr)
	}
	if cniErr == nil {
		for _, id := range network {
			remove(id)
		}
	}
	if cfg.CPUSets != nil {
		for _, owner := range r.CPUSetOwners {
			if err := cfg.CPUSets.Release(owner); err != nil {
				errs = append(errs, err)
			}
		}
	}
	err := errors.Join(errs...)
	if err == nil {
		if rmErr := os.Remove(recordPath(cfg.SandboxDir, r.PodID)); rmErr != nil && !os.IsNotExist(rmErr) {
			err = rmErr
		}
	}
	return err
}

func appendNew(ids []string, id string) []string {
	for _, x := range ids {
		if x == id || strings.HasPrefix(id, x) || strings.HasPrefix(x, id) {
			return ids
		}
	}
	return append(ids, id)
}

// cniDel deletes the attachment r. The netns is the network container's
// when it still runs; else "" (the plugins then release IPAM and host
// state only, the kernel having removed the veth with the netns).
func cniDel(ctx context.Context, cfg Config, r *cniRecord) error {
	list, err := libcni.NetworkConfFromBytes(r.ConfList)
	if err != nil {
		return fmt.Errorf("CNI DEL: recorded conf list: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	netns := ""
	if c, err := cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: r.ContainerID, Context: ctx}); err == nil && c.State.Running && c.State.Pid > 0 {
		netns = "/proc/" + strconv.Itoa(c.State.Pid) + "/ns/net"
	}
	rt := &libcni.RuntimeConf{ContainerID: r.ContainerID, NetNS: netns, IfName: r.IfName, CacheDir: r.CacheDir}
	if len(r.PortMappings) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": r.PortMappings}
	}
	cni := libcni.NewCNIConfigWithCacheDir(r.PluginDirs, r.CacheDir, nil)
	if err := cni.DelNetworkList(ctx, list, rt); err != nil {
		return fmt.Errorf("CNI DEL network %q container %q: %v: %w", list.Name, r.ContainerID, err, errdefs.ErrUnavailable)
	}
	return nil
}
