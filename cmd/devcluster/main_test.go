package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
		"non-loopback control":  {"-listen", "127.0.0.1:0", "-control", "0.0.0.0:0"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(context.Background(), args, io.Discard); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// -control serves a test control API: removing an agent takes it out of
// the cluster (Cluster.RemoveAgent); an unknown agent is a 404.
func TestRunServesControlAPI(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(cfgPath, []byte(`{"agents": [{"hostname": "one"}, {"hostname": "two"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-config", cfgPath, "-listen", "127.0.0.1:0", "-work-dir", dir, "-control", "127.0.0.1:0"}, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	lines := bufio.NewScanner(pr)
	var master, control string
	var agents []string
	for control == "" && lines.Scan() {
		key, value, _ := strings.Cut(lines.Text(), ": ")
		switch key {
		case "master":
			master = value
		case "agent":
			agents = append(agents, value)
		case "control":
			control = value
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	if master == "" || control == "" || len(agents) != 2 {
		t.Fatalf("master %q, control %q, agents %v", master, control, agents)
	}
	remove := func(id string) int {
		resp, err := http.Post(control+"/agents/"+id+"/remove", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := remove(agents[0]); code != http.StatusNoContent {
		t.Fatalf("remove: %d", code)
	}
	if code := remove(agents[0]); code != http.StatusNotFound {
		t.Errorf("remove of a removed agent: %d, want 404", code)
	}
	resp, err := http.Get(master + "/master/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var state struct {
		Slaves []struct {
			ID string `json:"id"`
		} `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		t.Fatal(err)
	}
	if len(state.Slaves) != 1 || state.Slaves[0].ID != agents[1] {
		t.Errorf("agents after the removal: %+v, want only %s", state.Slaves, agents[1])
	}

	// An agent added at run time registers; a second of its ID is a 409,
	// a config with an unknown field a 400.
	add := func(body string) (int, string) {
		resp, err := http.Post(control+"/agents", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var added struct{ ID string }
		_ = json.NewDecoder(resp.Body).Decode(&added)
		return resp.StatusCode, added.ID
	}
	code, id := add(`{"id": "late-1", "hostname": "three", "attributes": [{"name": "rack", "text": "r9"}]}`)
	if code != http.StatusCreated || id != "late-1" {
		t.Fatalf("add: %d %q", code, id)
	}
	if code, _ := add(`{"id": "late-1", "hostname": "four"}`); code != http.StatusConflict {
		t.Errorf("add of an existing ID: %d, want 409", code)
	}
	if code, _ := add(`{"hostnme": "typo"}`); code != http.StatusBadRequest {
		t.Errorf("add with an unknown field: %d, want 400", code)
	}
	resp, err = http.Get(master + "/master/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		t.Fatal(err)
	}
	if len(state.Slaves) != 2 || !slices.ContainsFunc(state.Slaves, func(s struct {
		ID string `json:"id"`
	}) bool {
		return s.ID == "late-1"
	}) {
		t.Errorf("agents after the addition: %+v, want %s and late-1", state.Slaves, agents[1])
	}
}
