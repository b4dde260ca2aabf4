package devcluster

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killSession destroys a container the way Mesos' posix launcher does
// (os::killtree with groups and sessions): SIGKILL to every process of the
// session sid, whatever process group it moved to, and returns once none
// is left (bounded by sessionKillWait). Processes that left the session
// (setsid daemons) and Docker containers survive, as on a real agent.
// Forks racing the kill are caught by the next pass.
func killSession(sid int) {
	if sid <= 0 {
		return
	}
	// A killed process takes a moment to exit, longer on a loaded
	// machine: until it has, the container is not destroyed.
	for deadline := time.Now().Add(sessionKillWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		pids := sessionMembers(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sessionKillWait bounds how long killSession waits for killed processes
// to exit (one stuck in the kernel would otherwise hold Stop forever).
const sessionKillWait = 10 * time.Second

// sessionMembers lists the live processes whose session is sid (field 6 of
// /proc/<pid>/stat); zombies are already dead.
func sessionMembers(sid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state ppid pgrp session ...
		if len(fields) < 4 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if id, err := strconv.Atoi(fields[3]); err == nil && id == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}
