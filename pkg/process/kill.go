package process

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// kill stops the task: stopCmd, the grace period, SIGTERM, TermWait,
// SIGKILL (without stopCmd: SIGTERM, grace, SIGKILL), to the whole
// process group and everything in the cgroup; then reports state.
func (t *task) kill(grace time.Duration, state taskstate.State, reason *mesos.TaskStatus_Reason, msg string) {
	t.cancel()
	t.opMu.Lock()
	defer t.opMu.Unlock()
	t.mu.Lock()
	if !t.advance(lifeStopping) {
		t.mu.Unlock()
		return // done already
	}
	inst := t.inst
	t.mu.Unlock()
	t.stopHealthChecks()
	if inst != nil {
		t.stop(inst, grace)
	}
	t.finish(state, reason, msg, nil)
}

// stop ends inst politely, then by force.
func (t *task) stop(inst *instance, grace time.Duration) {
	if t.proc.StopCmd != "" {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		out, code, err := t.runCommand(ctx, t.proc.StopCmd)
		cancel()
		t.log().Info("stopCmd ran", "exit", code, "err", err, "output", out.String())
		if t.waitGone(inst, grace) {
			return
		}
		t.killInstance(inst, syscall.SIGTERM)
		if t.waitGone(inst, t.rt.cfg.TermWait) {
			return
		}
	} else {
		t.killInstance(inst, syscall.SIGTERM)
		if t.waitGone(inst, grace) {
			return
		}
	}
	t.forceKill(inst)
}

// pids lists the live processes of inst: its process group and the
// task's cgroup.
func (t *task) pids(inst *instance) []int {
	t.mu.Lock()
	cg := t.cg
	t.mu.Unlock()
	seen := map[int]bool{}
	var out []int
	add := func(pid int) {
		if !seen[pid] && alive(pid) {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	if cg != nil {
		for _, pid := range cg.Pids() {
			add(pid)
		}
	}
	for _, pid := range groupMembers(inst.pgid) {
		add(pid)
	}
	add(inst.mainPid)
	sort.Ints(out)
	return out
}

// groupMembers scans /proc for the processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// killInstance signals inst's process group, then every other process of
// the task (the cgroup's, those that left the group): once each.
func (t *task) killInstance(inst *instance, sig syscall.Signal) {
	pids := t.pids(inst)
	_ = syscall.Kill(-inst.pgid, sig)
	for _, pid := range pids {
		if pg, err := syscall.Getpgid(pid); err == nil && pg != inst.pgid {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// waitGone polls until inst has no live process or d passes.
func (t *task) waitGone(inst *instance, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(t.pids(inst)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// forceKill SIGKILLs inst until nothing of it is left (bounded).
func (t *task) forceKill(inst *instance) {
	for i := 0; i < 250; i++ {
		if len(t.pids(inst)) == 0 {
			return
		}
		t.killInstance(inst, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
	t.log().Error("processes survived SIGKILL", "pids", t.pids(inst))
}

// finish kills what is left, removes the cgroup and reports the terminal
// state once.
func (t *task) finish(state taskstate.State, reason *mesos.TaskStatus_Reason, msg string, code *int) {
	t.mu.Lock()
	if !t.advance(lifeDone) {
		t.mu.Unlock()
		return
	}
	inst, cg := t.inst, t.cg
	t.info.ExitCode = code
	t.mu.Unlock()
	t.cancel()
	t.stopHealthChecks()
	if inst != nil {
		t.forceKill(inst)
	}
	if cg != nil {
		if err := cg.Remove(); err != nil {
			t.log().Warn("remove cgroup", "err", err)
		}
	}
	var healthy *bool
	if state == taskstate.Failed && reason != nil && *reason == reasonHealth {
		f := false
		healthy = &f
	}
	t.report(state, reason, msg, healthy)
	close(t.finished)
}
