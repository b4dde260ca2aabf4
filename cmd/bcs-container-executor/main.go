package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	docker "github.com/fsouza/go-dockerclient"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/numa"
	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
	"github.com/bcs-mesos/bcs-mesos/pkg/podruntime"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
)

func main() {
	if err := run(); err != nil {
		slog.Error("bcs-container-executor failed", "err", err)
		os.Exit(1)
	}
}

// labels is a repeatable key=value flag.
type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }

func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want key=value", s)
	}
	l[k] = v
	return nil
}

func run() error {
	extraLabels := labels{}
	var (
		endpoint    = flag.String("docker-endpoint", "unix:///var/run/docker.sock", "dockerd address")
		networkMode = flag.String("network-mode", "", `"" for CNM (HOST, BRIDGE, NONE, USER per task group), "cni" for CNI`)
		pluginDir   = flag.String("cni-plugin-dir", pod.DefaultCNIPluginDir, "CNI plugin binaries (comma-separated list of directories)")
		confDir     = flag.String("cni-conf-dir", pod.DefaultCNIConfDir, "CNI network configuration lists")
		cacheDir    = flag.String("cni-cache-dir", "", "libcni result cache; empty is /var/lib/cni")
		nodeAddr    = flag.String("node-addr", "", "agent address (BCS_NODE_ADDR); empty is the host of MESOS_AGENT_ENDPOINT")
		portBindIP  = flag.String("port-bind-ip", "", "host address BRIDGE ports are published on; empty is every address")
		numaState   = flag.String("numa-state", numa.DefaultStatePath, "agent-wide CPU pinning state file (shared by every executor of the agent)")
		sysfsRoot   = flag.String("sysfs-root", "/sys", "where devices/system/node is read from")
		ackTimeout  = flag.Duration("ack-timeout", 10*time.Second, "wait for acknowledgements once every task is terminal")
		codec       = flag.String("codec", "protobuf", "executor API encoding: protobuf or json")
	)
	flag.Var(extraLabels, "label", "key=value label put on every container (repeatable)")
	var netImage, netCommand string
	for _, prefix := range []string{"", "cni-"} { // the cni- names are older aliases
		flag.StringVar(&netImage, prefix+"network-image", pod.DefaultNetworkImage,
			"image of the network container holding a pod's network (CNI pods, CNM pods of several containers outside HOST mode); agents need it")
		flag.StringVar(&netCommand, prefix+"network-command", "", "command of the network container (space-separated); empty is the image's")
	}
	flag.Parse()

	env, err := config.FromEnv()
	if err != nil {
		return err
	}
	if err := executor.PrivateSandbox(env.Sandbox); err != nil {
		return err
	}
	agentTLS, err := executor.AgentTLS(os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("executor", env.ExecutorID)
	slog.SetDefault(log)
	var network pod.NetworkType
	switch *networkMode {
	case "":
	case "cni":
		network = pod.NetworkCNI
	default:
		return fmt.Errorf("--network-mode %q: want \"\" or \"cni\"", *networkMode)
	}
	c, err := mesoswire.ByName(*codec)
	if err != nil {
		return fmt.Errorf("--codec: %w", err)
	}
	if *nodeAddr == "" {
		if host, _, err := net.SplitHostPort(env.AgentEndpoint); err == nil {
			*nodeAddr = host
		}
	}
	cli, err := docker.NewClient(*endpoint)
	if err != nil {
		return fmt.Errorf("docker endpoint %q: %w", *endpoint, err)
	}
	netCmd := strings.Fields(netCommand)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rt, err := podruntime.New(ctx, podruntime.Config{
		Docker:        cli,
		ExecutorID:    env.ExecutorID,
		FrameworkID:   env.FrameworkID,
		SandboxDir:    env.Sandbox,
		NodeAddr:      *nodeAddr,
		PortBindIP:    *portBindIP,
		AgentEndpoint: env.AgentEndpoint,
		Network:       network,
		CNI: pod.CNIConfig{
			PluginDirs: strings.Split(*pluginDir, ","), ConfDir: *confDir, CacheDir: *cacheDir,
		},
		NetworkImage: netImage, NetworkCommand: netCmd,
		CPUSets: &numa.Allocator{SysfsRoot: *sysfsRoot, StatePath: *numaState},
		Labels:  extraLabels,
		Remote:  &remotefile.Fetcher{Dir: filepath.Join(env.Sandbox, remotefile.SandboxDir)},
		Logger:  log,
	})
	if err != nil {
		return err
	}
	d := executor.New(executor.Config{Env: env, Runtime: rt, Logger: log, Codec: c, AgentTLS: agentTLS, AckTimeout: *ackTimeout, Sweep: rt.SweepDead})
	log.Info("starting", "framework", env.FrameworkID, "agent", env.AgentEndpoint, "docker", *endpoint, "network", *networkMode)
	runErr := d.Run(ctx)
	// Containers must not outlive the executor: wait for the teardown.
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if runErr != nil {
		rt.Shutdown(5 * time.Second)
	}
	if err := rt.Wait(wctx); err != nil {
		log.Warn("waiting for the pods to be torn down", "err", err)
	}
	if runErr != nil {
		return runErr
	}
	log.Info("all tasks terminal; exiting")
	return nil
}
