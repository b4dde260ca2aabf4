package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/bcs-mesos/bcs-mesos/pkg/bcsctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bcsctl.Main(ctx, os.Args[1:], bcsctl.Env{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Terminal: term.IsTerminal(int(os.Stdout.Fd())),
		Width: func() int {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 80
			}
			return w
		},
		Getenv: os.Getenv,
	})
	stop()
	os.Exit(code)
}
