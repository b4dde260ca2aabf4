package pod

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Defaults of CNI mode (seed 001: CNI目录 /data/bcs/bcs-cni/bin).
const (
	DefaultCNIPluginDir = "/data/bcs/bcs-cni/bin"
	DefaultCNIConfDir   = "/data/bcs/bcs-cni/conf"
	DefaultCNIIfName    = "eth0"
)

// CNIConfig configures CNI mode.
type CNIConfig struct {
	// PluginDirs are searched for plugin binaries; default
	// DefaultCNIPluginDir.
	PluginDirs []string
	// ConfDir holds the network configuration lists (*.conflist, *.conf,
	// *.json); default DefaultCNIConfDir.
	ConfDir string
	// CacheDir is libcni's result cache; "" is libcni's default
	// (/var/lib/cni).
	CacheDir string
	// IfName is the interface inside the pod; default eth0.
	IfName string
	// Network names the network; "" takes the first task's networkMode
	// (seed 001: in CNI mode networkMode is the CNI network's name).
	Network string
	// NetworkImage and NetworkCommand run the network (pause-like)
	// container; the image must be present or pullable and the command
	// must keep running.
	NetworkImage   string
	NetworkCommand []string
}

func (c CNIConfig) withDefaults() CNIConfig {
	if len(c.PluginDirs) == 0 {
		c.PluginDirs = []string{DefaultCNIPluginDir}
	}
	if c.ConfDir == "" {
		c.ConfDir = DefaultCNIConfDir
	}
	if c.IfName == "" {
		c.IfName = DefaultCNIIfName
	}
	return c
}

// setupCNI creates and starts the network container with network none and
// runs CNI ADD on its netns. The state file names the container before it
// starts and the attachment before ADD runs.
func (p *Pod) setupCNI(ctx context.Context) error {
	cc := p.cfg.CNI
	name := cc.Network
	if name == "" {
		name = p.tasks[0].spec.Container.NetworkMode
	}
	list, err := libcni.LoadConfList(cc.ConfDir, name)
	if err != nil {
		return fmt.Errorf("CNI network %q in %q: %v: %w", name, cc.ConfDir, err, errdefs.ErrInvalidArgument)
	}
	if cc.NetworkImage == "" {
		return fmt.Errorf("CNI mode needs a network container image: %w", errdefs.ErrInvalidArgument)
	}
	if err := p.pull(ctx, &proto.ContainerSpec{Image: cc.NetworkImage}); err != nil {
		return fmt.Errorf("network container: %w", err)
	}
	labels := map[string]string{}
	for k, v := range p.cfg.Labels {
		labels[k] = v
	}
	labels[LabelPod] = p.cfg.PodID
	labels[LabelRole] = "network"
	c, err := p.cfg.Docker.CreateContainer(docker.CreateContainerOptions{
		Name: containerName(p.cfg.PodID, "network"),
		Config: &docker.Config{
			Image: cc.NetworkImage, Cmd: cc.NetworkCommand, Labels: labels,
			Hostname: p.tasks[0].spec.Container.Hostname,
		},
		HostConfig: &docker.HostConfig{NetworkMode: "none"},
		Context:    ctx,
	})
	if err != nil {
		return fmt.Errorf("create network container: %v: %w", err, dockerClass(err))
	}
	p.mu.Lock()
	p.netID = c.ID
	p.mu.Unlock()
	if err := p.saveRecord(); err != nil {
		return err
	}
	if err := p.cfg.Docker.StartContainerWithContext(c.ID, nil, ctx); err != nil {
		return fmt.Errorf("start network container: %v: %w", err, dockerClass(err))
	}
	ins, err := p.cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: c.ID, Context: ctx})
	if err != nil || ins.State.Pid == 0 {
		return fmt.Errorf("network container %q is not running: %v: %w", c.ID, err, errdefs.ErrUnavailable)
	}
	rec := &cniRecord{
		ConfList: list.Bytes, PluginDirs: cc.PluginDirs, CacheDir: cc.CacheDir,
		ContainerID: c.ID, NetNS: "/proc/" + strconv.Itoa(ins.State.Pid) + "/ns/net", IfName: cc.IfName,
	}
	for _, t := range p.tasks {
		for _, port := range t.spec.Ports {
			if port.HostPort > 0 {
				proto := "tcp"
				if strings.EqualFold(port.Protocol, "udp") {
					proto = "udp"
				}
				rec.PortMappings = append(rec.PortMappings, map[string]any{
					"hostPort": port.HostPort, "containerPort": containerPort(port), "protocol": proto,
				})
			}
		}
	}
	p.mu.Lock()
	p.cni = rec
	p.mu.Unlock()
	if err := p.saveRecord(); err != nil {
		return err
	}
	rt := &libcni.RuntimeConf{ContainerID: rec.ContainerID, NetNS: rec.NetNS, IfName: rec.IfName, CacheDir: rec.CacheDir}
	if len(rec.PortMappings) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": rec.PortMappings}
	}
	res, err := libcni.NewCNIConfigWithCacheDir(cc.PluginDirs, cc.CacheDir, nil).AddNetworkList(ctx, list, rt)
	if err != nil {
		return fmt.Errorf("CNI ADD network %q: %v: %w", name, err, errdefs.ErrUnavailable)
	}
	cur, err := types100.NewResultFromResult(res)
	if err != nil {
		return fmt.Errorf("CNI ADD network %q: result: %v: %w", name, err, errdefs.ErrUnavailable)
	}
	for _, ip := range cur.IPs {
		if ip.Address.IP.To4() != nil {
			p.mu.Lock()
			p.hostIP = ip.Address.IP.String()
			p.mu.Unlock()
			break
		}
	}
	return nil
}
