package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The command starts the cluster a config file describes, prints the
// master URL, serves /master/state and stops when its context ends.
func TestRunServesConfiguredCluster(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cluster.json")
	cfg := `{"agents": [{"hostname": "one"}, {"hostname": "two"}]}`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-config", cfgPath, "-listen", "127.0.0.1:0", "-work-dir", dir}, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "master: http://127.0.0.1:") {
		t.Fatalf("first line %q", lines.Text())
	}
	url := strings.TrimPrefix(lines.Text(), "master: ")
	go func() {
		for lines.Scan() {
		}
	}()

	resp, err := http.Get(url + "/master/state")
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Slaves []struct {
			Hostname string `json:"hostname"`
		} `json:"slaves"`
	}
	err = json.NewDecoder(resp.Body).Decode(&state)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Slaves) != 2 || state.Slaves[0].Hostname != "one" || state.Slaves[1].Hostname != "two" {
		t.Errorf("slaves %+v", state.Slaves)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if _, err := http.Get(url + "/master/state"); err == nil {
		t.Error("master still serving after stop")
	}
}

// Bad flags and configs are errors, not silent defaults.
func TestRunRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown executor mode": {"-listen", "127.0.0.1:0", "-executors", "docker"},
		"non-loopback address":  {"-listen", "0.0.0.0:0"},
		"missing config file":   {"-config", filepath.Join(t.TempDir(), "none.json")},
		"unknown flag":          {"-bogus"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(context.Background(), args, io.Discard); err == nil {
				t.Error("accepted")
			}
		})
	}
}
