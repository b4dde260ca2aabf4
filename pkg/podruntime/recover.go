package podruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/pod"
)

// OwnerFile is written into the sandbox by every executor run: it names
// the process (pid and kernel start time, so a reused pid does not count)
// whose pods the sandbox's state files describe.
const OwnerFile = "bcs-container-executor.owner"

type owner struct {
	Pid       int    `json:"pid"`
	StartTime string `json:"startTime"` // /proc/<pid>/stat field 22
}

func writeOwner(sandbox string) error {
	start, err := procStartTime(os.Getpid())
	if err != nil {
		return fmt.Errorf("owner file: %w", err)
	}
	data, _ := json.Marshal(owner{Pid: os.Getpid(), StartTime: start})
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return fmt.Errorf("owner file: %w", err)
	}
	tmp := filepath.Join(sandbox, OwnerFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("owner file: %w", err)
	}
	return os.Rename(tmp, filepath.Join(sandbox, OwnerFile))
}

// ownerAlive tells whether the executor that wrote dir's owner file still
// runs. No (readable) owner file means no live owner.
func ownerAlive(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, OwnerFile))
	if err != nil {
		return false
	}
	var o owner
	if json.Unmarshal(data, &o) != nil || o.Pid <= 0 {
		return false
	}
	start, err := procStartTime(o.Pid)
	return err == nil && start == o.StartTime
}

// procStartTime is field 22 of /proc/<pid>/stat; zombies count as gone.
func procStartTime(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	fields := strings.Fields(s[i+1:]) // fields[0] is field 3, the state
	if len(fields) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return "", fmt.Errorf("process %d has exited", pid)
	}
	return fields[19], nil
}

// Recover tears down (pod.Cleanup: business containers, CNI attachment,
// network container, cpusets) every pod left in cfg.SandboxDir by an
// earlier run, and in the sandbox of every other run of the framework's
// executors on this agent whose owner is dead. A crashed executor's
// successor is usually a new executor with its own sandbox
// (bcs-scheduler gives each launch a new executor ID), so looking only at
// one's own sandbox would leak the crashed pod. The Mesos layout is
// <agent work dir>/…/executors/<executor>/runs/<run>; a sandbox elsewhere
// is cleaned alone. cfg.PodID is ignored. It returns how many pods it
// tore down.
func Recover(ctx context.Context, cfg pod.Config) (int, error) {
	own := cfg.SandboxDir
	var errs []error
	pods, err := pod.Cleanup(ctx, cfg)
	if err != nil {
		errs = append(errs, fmt.Errorf("sandbox %q: %w", own, err))
	}
	runs := filepath.Dir(own)
	if filepath.Base(runs) != "runs" {
		return pods, errors.Join(errs...)
	}
	executors := filepath.Dir(filepath.Dir(runs))
	if filepath.Base(executors) != "executors" {
		return pods, errors.Join(errs...)
	}
	dirs, err := filepath.Glob(filepath.Join(executors, "*", "runs", "*"))
	if err != nil {
		return pods, errors.Join(append(errs, err)...)
	}
	for _, dir := range dirs {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || sameDir(dir, own) {
			continue // "latest" is a symlink to one of the others
		}
		if ownerAlive(dir) {
			continue
		}
		c := cfg
		c.SandboxDir = dir
		n, err := pod.Cleanup(ctx, c)
		pods += n
		if err != nil {
			errs = append(errs, fmt.Errorf("sandbox %q: %w", dir, err))
		}
	}
	return pods, errors.Join(errs...)
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
