package devcluster

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// killSession destroys a container the way Mesos' posix launcher does
// (os::killtree with groups and sessions): SIGKILL to every process of the
// session sid, whatever process group it moved to. Processes that left the
// session (setsid daemons) and Docker containers survive, as on a real
// agent. Forks racing the kill are caught by a few passes.
func killSession(sid int) {
	if sid <= 0 {
		return
	}
	for pass := 0; pass < 5; pass++ {
		pids := sessionMembers(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

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
