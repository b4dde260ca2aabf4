package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

type options struct {
	listen        string
	dataDir       string
	etcdEndpoints string
	secretKeyFile string
	masters       string
	dev           bool
}

func main() {
	var o options
	flag.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address of the REST API")
	flag.StringVar(&o.dataDir, "data-dir", "./bcs-data", "directory of the embedded etcd and the secret key")
	flag.StringVar(&o.etcdEndpoints, "etcd-endpoints", "", "comma-separated etcd client URLs; empty runs an embedded etcd under --data-dir")
	flag.StringVar(&o.secretKeyFile, "secret-key-file", "", "AES key sealing secrets at rest (default <data-dir>/secret.key, created if missing)")
	flag.StringVar(&o.masters, "master", "", "comma-separated Mesos master URLs")
	flag.BoolVar(&o.dev, "dev", false, "run the whole system on this machine (embedded dev cluster)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		slog.Error("bcs-scheduler", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return err
	}
	endpoints := splitList(o.etcdEndpoints)
	if len(endpoints) == 0 {
		etcd, err := store.StartEmbedded(ctx, o.dataDir)
		if err != nil {
			return fmt.Errorf("embedded etcd: %w", err)
		}
		defer etcd.Close()
		endpoints = etcd.Endpoints()
		slog.Info("embedded etcd", "dir", o.dataDir, "endpoints", endpoints)
	}
	keyFile := o.secretKeyFile
	if keyFile == "" {
		keyFile = filepath.Join(o.dataDir, "secret.key")
	}
	key, err := store.LoadOrCreateKey(keyFile)
	if err != nil {
		return err
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Config{Endpoints: endpoints, Sealer: sealer})
	if err != nil {
		return err
	}
	defer st.Close()

	if o.dev || o.masters != "" {
		slog.Warn("the Mesos framework core is not built yet: serving the API only", "dev", o.dev, "master", o.masters)
	}

	listener, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: api.NewServer(api.Config{
			Registry:   registry.New(st, time.Now),
			Leadership: api.Single{URL: "http://" + listener.Addr().String()},
			Healthy:    func(ctx context.Context) error { return st.Ping(ctx) },
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	slog.Info("API listening", "addr", listener.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(listener) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
