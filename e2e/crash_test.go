package e2e_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// executorPid finds the executor process of a task group: its working
// directory is its sandbox, .../executors/<task group ID>/runs/<run>.
func executorPid(t *testing.T, taskGroupID string) int {
	t.Helper()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if err != nil || !strings.Contains(cwd, "/executors/"+taskGroupID+"/runs/") {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm")); strings.HasPrefix(string(comm), "bcs-") {
			return pid
		}
	}
	t.Fatalf("no executor process of %s", taskGroupID)
	return 0
}

// listening reports whether something accepts connections on a local port.
func listening(port uint32) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// relaunched waits for instance 0 of an application to run again under a
// new task group and returns it.
func (s *system) relaunched(ns, name, old string) instanceView {
	s.t.Helper()
	var got instanceView
	s.eventually("instance 0 relaunched", func() (bool, string) {
		v, _ := s.app(ns, name)
		for _, i := range v.Status.Instances {
			if i.ID == 0 {
				got = i
				return i.TaskGroupID != old && i.State == "TASK_RUNNING", fmt.Sprintf("%+v", i)
			}
		}
		return false, fmt.Sprintf("%+v", v.Status)
	})
	return got
}

// within30s checks cond for 30 seconds after a crash: the bound
// for reaping what a dead executor left.
func (s *system) within30s(what string, cond func() (bool, string)) {
	s.t.Helper()
	s.eventuallyWithin(30*time.Second, "30s after the executor's kill -9: "+what, cond)
}

// Kill -9 of a process executor. Its game server left the
// executor's session (setsid), so only the scheduler's sweep can reach it:
// within 30 s the process and its cgroup are gone, and after the delete
// nothing of the application is left.
func TestKilledProcessExecutorLeavesNothing(t *testing.T) {
	s := startSystem(t)
	m := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "crashy"
		m["spec"].(map[string]any)["instance"] = 1
		delete(m, "constraint")
		proc := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
		proc["startCmd"] = "setsid ./start.sh ${ports.http} ${pidFile}"
		// No relaunch: a new executor would sweep at its start too, and
		// this test is about the scheduler's sweep.
		m["restartPolicy"] = map[string]any{"policy": "Never"}
	})
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "crashy", 1)[0]
	pid := pidOf(t, s.runPath(inst.Host, "demo.crashy.0", "gamesvr.pid"))
	cgroups := matching("/sys/fs/cgroup/memory/bcs-process", inst.TaskGroupID+"@")
	if len(cgroups) != 1 {
		t.Fatalf("cgroups of %s: %v", inst.TaskGroupID, cgroups)
	}
	if err := syscall.Kill(executorPid(t, inst.TaskGroupID), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.within30s("the orphan reaped", func() (bool, string) {
		var left []string
		if alive(pid) {
			left = append(left, fmt.Sprintf("game server pid %d", pid))
		}
		left = append(left, matching("/sys/fs/cgroup/memory/bcs-process", inst.TaskGroupID+"@")...)
		return len(left) == 0, strings.Join(left, ", ")
	})
	if code, body := s.call("DELETE", "/v1/apps/demo/crashy", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("nothing of the application left", func() (bool, string) {
		left := matching("/sys/fs/cgroup/memory/bcs-process", "demo_crashy_")
		_, code := s.app("demo", "crashy")
		return len(left) == 0 && code == 404, strings.Join(left, ", ")
	})
}

// Kill -9 of a container executor in BRIDGE mode. Its two
// containers and the host port Docker published for them outlive it; the
// sweep removes them within 30 s; the instance runs again and answers.
func TestKilledContainerExecutorLeavesNothing(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.manifest("application.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "web", 1)[0]
	port := inst.Ports["http"]
	if !listening(port) {
		t.Fatalf("nothing listens on the instance's host port %d", port)
	}
	if err := syscall.Kill(executorPid(t, inst.TaskGroupID), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.within30s("the pod reaped", func() (bool, string) {
		var left []string
		for _, task := range []string{"_0", "_1"} {
			if c := docker(t, "ps", "-aq", "--filter", "label=io.bcs.task="+inst.TaskGroupID+task); c != "" {
				left = append(left, "container "+c)
			}
		}
		again, _ := s.app("demo", "web")
		reused := len(again.Status.Instances) == 1 && again.Status.Instances[0].Ports["http"] == port
		if listening(port) && !reused {
			left = append(left, fmt.Sprintf("a listener on the old host port %d", port))
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	again := s.relaunched("demo", "web", inst.TaskGroupID)
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/", again.Ports["http"])); code != 200 || !strings.Contains(body, "hello from web") {
		t.Errorf("the relaunched instance on port %d: %d %q", again.Ports["http"], code, body)
	}
	if code, body := s.call("DELETE", "/v1/apps/demo/web", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container left", func() (bool, string) {
		left := s.podContainers("demo_web_")
		_, code := s.app("demo", "web")
		return len(left) == 0 && code == 404, strings.Join(left, " ")
	})
}

// Kill -9 of a container executor in CNI mode. The business
// and network containers, the IP in host-local and the veth on the bridge
// outlive it; the sweep releases them within 30 s.
func TestKilledCNIExecutorLeavesNothing(t *testing.T) {
	args, bridge, ipamDir := cniNetwork(t)
	s := startSystem(t, args...)
	// One instance and no relaunch: a new executor on the agent would
	// sweep at its start too, and this test is about the scheduler's sweep.
	app := strings.Replace(cniApp, `"instance": 3`, `"instance": 1`, 1)
	app = strings.Replace(app, `"policy": "Always"`, `"policy": "Never"`, 1)
	if code, body := s.call("POST", "/v1/apps", []byte(app)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	inst := s.running("demo", "cnisvc", 1)[0]
	if leases := allocations(ipamDir); len(leases) != 1 {
		t.Fatalf("IPs %v, want one", leases)
	}
	if err := syscall.Kill(executorPid(t, inst.TaskGroupID), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.within30s("the pod and its network reaped", func() (bool, string) {
		var left []string
		if out := docker(t, "ps", "-aq", "--filter", "label=io.bcs.pod="+inst.TaskGroupID); out != "" {
			left = append(left, "containers "+strings.ReplaceAll(out, "\n", " "))
		}
		if leases := allocations(ipamDir); len(leases) > 0 {
			left = append(left, "IPs "+strings.Join(leases, " "))
		}
		if veths, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif")); len(veths) > 0 {
			left = append(left, fmt.Sprintf("%d veths", len(veths)))
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	if code, body := s.call("DELETE", "/v1/apps/demo/cnisvc", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("the application deleted", func() (bool, string) {
		_, code := s.app("demo", "cnisvc")
		return code == 404, fmt.Sprint(code)
	})
}
