package schedulerd

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// serveDebug serves net/http/pprof at addr until stop is called, and
// says where it listens. Profiles show the process's memory (secrets
// included), so addr must be a loopback address.
func serveDebug(addr string, log *slog.Logger) (stop func(), listening string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("--debug-addr %q: want host:port: %w", addr, errdefs.ErrInvalidArgument)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, "", fmt.Errorf("--debug-addr %q: profiles show the process's memory, so they are served on a loopback address only (127.0.0.1:6060): %w", addr, errdefs.ErrInvalidArgument)
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(listener) }()
	log.Info("profiling (net/http/pprof)", "addr", "http://"+listener.Addr().String()+"/debug/pprof/")
	return func() { srv.Close() }, listener.Addr().String(), nil
}
