package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		slog.Error("devcluster failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("devcluster", flag.ContinueOnError)
	configPath := fs.String("config", "", "JSON config file (devcluster.Config)")
	listen := fs.String("listen", "", "master address (default 127.0.0.1:5050)")
	mode := fs.String("executors", "", "executor mode: simulated or process (default simulated)")
	workDir := fs.String("work-dir", "", "directory for agent sandboxes (default: a temporary directory)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg devcluster.Config
	if *configPath != "" {
		var err error
		if cfg, err = devcluster.LoadConfig(*configPath); err != nil {
			return err
		}
	}
	if *listen != "" {
		cfg.ListenAddr = *listen
	}
	if *mode != "" {
		cfg.ExecutorMode = devcluster.ExecutorMode(*mode)
	}
	if *workDir != "" {
		cfg.WorkDir = *workDir
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := devcluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Fprintf(out, "master: %s\n", c.MasterURL())
	for _, id := range c.Agents() {
		fmt.Fprintf(out, "agent: %s\n", id)
	}
	<-ctx.Done()
	return nil
}
