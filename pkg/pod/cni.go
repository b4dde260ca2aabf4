package pod

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
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

// setupCNI runs CNI ADD on the network container id (main process pid)
// and takes the pod's address from the result. The state file names the
// attachment before ADD runs.
func (p *Pod) setupCNI(ctx context.Context, id string, pid int) error {
	cc := p.cfg.CNI
	name := cc.Network
	if name == "" {
		name = p.tasks[0].spec.Container.NetworkMode
	}
	list, err := libcni.LoadConfList(cc.ConfDir, name)
	if err != nil {
		return fmt.Errorf("CNI network %q in %q: %v: %w", name, cc.ConfDir, err, errdefs.ErrInvalidArgument)
	}
	rec := &cniRecord{
		ConfList: list.Bytes, PluginDirs: cc.PluginDirs, CacheDir: cc.CacheDir,
		ContainerID: id, NetNS: "/proc/" + strconv.Itoa(pid) + "/ns/net", IfName: cc.IfName,
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
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podNetMode = "cni"
	for _, ip := range cur.IPs {
		if ip.Address.IP.To4() != nil {
			p.podIP = ip.Address.IP.String()
			break
		}
	}
	return nil
}
