package devcluster

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// sessionMembers lists the live processes whose session is sid; zombies
// are already dead.
func sessionMembers(sid int) []int {
	var pids []int
	eachProcess(func(pid int, st procStat) bool {
		if st.live() && st.session == sid {
			pids = append(pids, pid)
		}
		return true
	})
	return pids
}

// procStat is what /proc/<pid>/stat says of a process.
type procStat struct {
	state     string // field 3: R, S, D, Z (zombie), X (dead), ...
	session   int    // field 6
	startTime uint64 // field 22: clock ticks after boot
}

func (st procStat) live() bool { return st.state != "Z" && st.state != "X" }

func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // from field 3 on
	if len(fields) < 20 {
		return procStat{}, false
	}
	session, err := strconv.Atoi(fields[3])
	if err != nil {
		return procStat{}, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: fields[0], session: session, startTime: start}, true
}

// eachProcess calls fn for every process of the machine until fn returns
// false.
func eachProcess(fn func(pid int, st procStat) bool) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && !fn(pid, st) {
			return
		}
	}
}

// sessionLeader is the leader of a container's session found again after
// the cluster's restart: it is no child of this process, so its exit is
// noticed through a pidfd (Linux 5.3), which also pins it against pid
// reuse once opened.
type sessionLeader struct {
	pid       int
	startTime uint64
	pidfd     int // -1: the leader is gone
}

// findSessionLeader finds the leader of a checkpointed container's
// session: the process of its pid that started at its start time, or,
// when the checkpoint was written before the container's process started,
// the session leader working in its sandbox. A leader that is gone leaves
// pidfd -1 and pid the session's ID when members of the session may
// remain (the kernel does not reuse the ID of a live session), or 0 when
// another process took the pid, which is then not the container's.
func findSessionLeader(pid int, startTime uint64, sandbox string) sessionLeader {
	if pid == 0 {
		eachProcess(func(p int, st procStat) bool {
			if st.session != p || !st.live() {
				return true
			}
			if cwd, err := os.Readlink("/proc/" + strconv.Itoa(p) + "/cwd"); err == nil && cwd == sandbox {
				pid, startTime = p, st.startTime
				return false
			}
			return true
		})
		if pid == 0 {
			return sessionLeader{pidfd: -1}
		}
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// Gone (ESRCH); on a kernel without pidfds the leader cannot be
		// watched, and the caller's kill of the session ends it.
		return sessionLeader{pid: pid, startTime: startTime, pidfd: -1}
	}
	if st, ok := readProcStat(pid); !ok || st.startTime != startTime {
		_ = unix.Close(fd)
		if ok {
			pid = 0
		}
		return sessionLeader{pid: pid, startTime: startTime, pidfd: -1}
	}
	return sessionLeader{pid: pid, startTime: startTime, pidfd: fd}
}

// release closes the leader's pidfd, which its caller no longer waits on.
func (l sessionLeader) release() {
	if l.pidfd >= 0 {
		_ = unix.Close(l.pidfd)
	}
}

// wait returns once the leader has exited, and releases its pidfd.
func (l sessionLeader) wait() {
	if l.pidfd < 0 {
		return
	}
	defer unix.Close(l.pidfd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(l.pidfd), Events: unix.POLLIN}}, -1)
		if err != unix.EINTR {
			return
		}
	}
}
