package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/simexec"
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
	control := fs.String("control", "", "loopback address of a test control API (POST /agents, POST /agents/{id}/remove); default none")
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
	cfg.SimulatedMessages = simexec.Answer // simulated executors answer updates as bcs's do
	if *workDir != "" {
		cfg.WorkDir = *workDir
	}
	var controlLn net.Listener
	if *control != "" {
		host, _, err := net.SplitHostPort(*control)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return fmt.Errorf("-control %q: want a loopback host:port", *control)
		}
		if controlLn, err = net.Listen("tcp", *control); err != nil {
			return fmt.Errorf("-control: %w", err)
		}
		defer controlLn.Close()
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
	if controlLn != nil {
		srv := &http.Server{Handler: controlAPI(c), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(controlLn) }()
		defer srv.Close()
		fmt.Fprintf(out, "control: http://%s\n", controlLn.Addr())
	}
	<-ctx.Done()
	return nil
}

// controlAPI lets tests outside the process do what the Go API lets tests
// inside do: POST /agents with an agent's config (devcluster.AgentSpec,
// as in the config file) adds an agent at run time (Cluster.AddAgent,
// 201 with {"id"}); POST /agents/{id}/remove takes an agent away as a
// partition would (Cluster.RemoveAgent: its tasks become
// TASK_UNREACHABLE).
func controlAPI(c *devcluster.Cluster) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /agents", func(w http.ResponseWriter, r *http.Request) {
		var spec devcluster.AgentSpec
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			http.Error(w, "agent spec: "+err.Error(), http.StatusBadRequest)
			return
		}
		id, err := c.AddAgent(spec)
		if err != nil {
			status := http.StatusInternalServerError
			switch {
			case errors.Is(err, errdefs.ErrInvalidArgument):
				status = http.StatusBadRequest
			case errors.Is(err, errdefs.ErrAlreadyExists):
				status = http.StatusConflict
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
	})
	mux.HandleFunc("POST /agents/{id}/remove", func(w http.ResponseWriter, r *http.Request) {
		if err := c.RemoveAgent(r.PathValue("id")); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, errdefs.ErrNotFound) {
				status = http.StatusNotFound
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}
