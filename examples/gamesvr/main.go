package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8899", "address to serve")
	flag.Parse()
	// Its log is its output: the process executor keeps it in the
	// sandbox, where bcsctl logs reads it.
	log.SetOutput(os.Stdout)
	var reloads atomic.Int64
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			reloads.Add(1)
			log.Printf("reloaded (%d)", reloads.Load())
		}
	}()
	host, _ := os.Hostname()
	http.HandleFunc("/check", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	http.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "pid %d reloads %d instance %s\n", os.Getpid(), reloads.Load(), os.Getenv("instanceid"))
	})
	// /version shows what an update changed: the package's VERSION file,
	// read at each request (a hot patch replaces it under the running
	// process), the BUILD variable (an in-place update restarts with it)
	// and the pid.
	http.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) {
		version, _ := os.ReadFile("VERSION")
		fmt.Fprintf(w, "version=%s build=%s pid=%d reloads=%d\n", strings.TrimSpace(string(version)), os.Getenv("BUILD"), os.Getpid(), reloads.Load())
	})
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "gamesvr instance %s on %s\n", os.Getenv("instanceid"), host)
	})
	log.Printf("instance %s serving on %s", os.Getenv("instanceid"), *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
