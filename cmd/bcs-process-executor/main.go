package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/executor/config"

	"github.com/bcs-mesos/bcs-mesos/pkg/executor"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
	"github.com/bcs-mesos/bcs-mesos/pkg/process"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

func main() {
	if err := run(); err != nil {
		slog.Error("bcs-process-executor failed", "err", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		workBase   = flag.String("work-base-dir", proto.DefaultWorkBaseDir, "root of ${work_base_dir}")
		runBase    = flag.String("run-base-dir", proto.DefaultRunBaseDir, "root of ${run_base_dir}")
		cacheDir   = flag.String("cache-dir", "/data/bcs/cache/process-executor", "IfNotPresent package cache")
		cgroupRoot = flag.String("cgroup-root", "/sys/fs/cgroup", "cgroup mount point (v1 hierarchies or v2)")
		cgroupPar  = flag.String("cgroup-parent", "bcs-process", "parent cgroup of the executors' task cgroups")
		noCgroups  = flag.Bool("no-cgroups", false, "run without cgroups: no resource limits, process groups only")
		user       = flag.String("default-user", "nobody", "user of processes whose spec names none")
		hostIP     = flag.String("host-ip", "127.0.0.1", "address HTTP and TCP health checks connect to")
		liveness   = flag.Duration("liveness-interval", time.Second, "how often a running process is checked")
		ackTimeout = flag.Duration("ack-timeout", 10*time.Second, "wait for acknowledgements once every task is terminal")
		termWait   = flag.Duration("term-wait", time.Second, "SIGTERM to SIGKILL after stopCmd and the grace period")
		codec      = flag.String("codec", "protobuf", "executor API encoding: protobuf or json")
		pkgDirs    = flag.String("package-dirs", "", "comma-separated absolute directories file:// package URIs may come from (none: file:// refused)")
	)
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
	var cgroups *process.Cgroups
	release := func() {} // the executor's cgroups, once its tasks ended
	// sweep answers sweep tasks: what dead executors left is reaped at
	// start and again for each sweep task, and the summary counts both.
	sweep := func(context.Context) (string, error) {
		return "nothing to sweep: without cgroups the executor cannot tell what dead executors left", nil
	}
	if !*noCgroups {
		// Task cgroups live under <parent>/<framework>.<executor>@<pid>-<start>;
		// claiming them sweeps those of the framework's executors that
		// died without cleaning up.
		owner := process.Owner{Framework: env.FrameworkID, Executor: env.ExecutorID}
		all, err := process.DetectCgroups(*cgroupRoot, *cgroupPar)
		var swept process.Swept
		if err == nil {
			cgroups, swept, err = all.Claim(owner, log)
		}
		if err != nil {
			log.Warn("no cgroups: tasks with resource limits will fail", "err", err)
			cgroups = nil
		} else {
			release = sync.OnceFunc(func() { all.Release(owner) })
			defer release()
			sweep = func(context.Context) (string, error) {
				swept = swept.Add(all.SweepDead(owner, log))
				return swept.String(), nil
			}
		}
	}
	packageDirs, err := process.ParseDirs(*pkgDirs)
	if err != nil {
		return fmt.Errorf("--package-dirs: %w", err)
	}
	rt, err := process.New(process.Config{
		PackageDirs:      packageDirs,
		WorkBaseDir:      *workBase,
		RunBaseDir:       *runBase,
		CacheDir:         *cacheDir,
		LogDir:           env.Sandbox,
		DefaultUser:      *user,
		Cgroups:          cgroups,
		HostIP:           *hostIP,
		AgentEndpoint:    env.AgentEndpoint,
		Logger:           log,
		LivenessInterval: *liveness,
		TermWait:         *termWait,
		Remote:           &remotefile.Fetcher{Dir: filepath.Join(env.Sandbox, remotefile.SandboxDir)},
	})
	if err != nil {
		return err
	}
	c, err := mesoswire.ByName(*codec)
	if err != nil {
		return fmt.Errorf("--codec: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	d := executor.New(executor.Config{Env: env, Runtime: rt, Logger: log, Codec: c, AgentTLS: agentTLS, AckTimeout: *ackTimeout, AllTerminal: release, Sweep: sweep})
	log.Info("starting", "framework", env.FrameworkID, "agent", env.AgentEndpoint, "checkpoint", env.Checkpoint)
	if err := d.Run(ctx); err != nil {
		return err
	}
	log.Info("all tasks terminal; exiting")
	return nil
}
