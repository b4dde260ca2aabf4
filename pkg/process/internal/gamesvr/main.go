package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	pidFile := flag.String("pidfile", "", "write the server's pid here")
	daemon := flag.Bool("daemon", false, "run in the background")
	flag.Parse()
	if *daemon {
		args := []string{"-addr", *addr, "-pidfile", *pidFile}
		cmd := exec.Command(os.Args[0], args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		fmt.Println("daemon", cmd.Process.Pid)
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	var reloads atomic.Int32
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				os.Exit(0)
			}
			reloads.Add(1)
		}
	}()
	http.HandleFunc("/check", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "gamesvr reloads=%d\n", reloads.Load()) })
	log.Fatal(http.Serve(ln, nil))
}
