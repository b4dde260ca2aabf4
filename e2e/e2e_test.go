package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The process example reaches RUNNING on 3 instances with hostname UNIQUE
// over 3 agents; its HTTP port answers; kill -9 of the pid in its pid file
// brings it back after the restartPolicy interval; reload runs reloadCmd.
func TestProcessExample(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.manifest("process.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	instances := s.running("demo", "gamesvr", 3)
	for _, inst := range instances {
		url := fmt.Sprintf("http://127.0.0.1:%d/", inst.Ports["http"])
		if code, body := get(url); code != 200 || !strings.Contains(body, fmt.Sprintf("gamesvr instance %d", inst.ID)) {
			t.Errorf("instance %d at %s: %d %q", inst.ID, url, code, body)
		}
	}

	// kill -9 of the process: the executor sees it die, the scheduler
	// relaunches it after interval 3s.
	pidFile := s.runPath(instances[0].Host, "demo.gamesvr.0", "gamesvr.pid") // relaunched on its agent (UNIQUE, 3 agents)
	pid := pidOf(t, pidFile)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.eventually("instance 0 back after its restart interval", func() (bool, string) {
		v, _ := s.app("demo", "gamesvr")
		for _, i := range v.Status.Instances {
			if i.ID == 0 {
				code, _ := get(fmt.Sprintf("http://127.0.0.1:%d/check", i.Ports["http"]))
				return i.Restarts == 1 && i.State == "TASK_RUNNING" && code == 200, fmt.Sprintf("%+v", i)
			}
		}
		return false, "no instance 0"
	})
	if newPid := pidOf(t, pidFile); newPid == pid {
		t.Errorf("pid %d did not change after the relaunch", pid)
	}

	// reload runs reload.sh, which sends gamesvr SIGHUP.
	one := instances[1]
	if code, body := s.call("POST", "/v1/taskgroups/"+one.TaskGroupID+"/reload", nil); code != 202 {
		t.Fatalf("reload: %d %s", code, body)
	}
	s.eventually("the reload", func() (bool, string) {
		_, body := get(fmt.Sprintf("http://127.0.0.1:%d/status", one.Ports["http"]))
		return strings.Contains(body, "reloads 1"), body
	})
}

// A constraint no agent satisfies leaves the application Abnormal with a
// message naming the rejections.
func TestUnsatisfiableConstraint(t *testing.T) {
	s := startSystem(t)
	m := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "nowhere"
		m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
			map[string]any{"name": "rack", "operate": "CLUSTER", "type": 4, "set": map[string]any{"item": []string{"r9"}}}}}}}
	})
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.eventually("Abnormal with the rejections", func() (bool, string) {
		v, _ := s.app("demo", "nowhere")
		return v.Status.State == "Abnormal" && strings.Contains(v.Status.Message, "0/3 agents fit: rack CLUSTER 3"),
			v.Status.State + " " + v.Status.Message
	})

	// One instance too many for hostname UNIQUE on 3 agents: Abnormal
	// while it waits; scaled to 3 the cause is gone, and so is Abnormal,
	// at once (no placement pass of another instance needed).
	crowded := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "crowded"
		m["spec"].(map[string]any)["instance"] = 4
	})
	if code, body := s.call("POST", "/v1/apps", crowded); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.eventually("the fourth instance fitting nowhere", func() (bool, string) {
		v, _ := s.app("demo", "crowded")
		running := 0
		for _, i := range v.Status.Instances {
			if i.State == "TASK_RUNNING" {
				running++
			}
		}
		return running == 3 && v.Status.State == "Abnormal" && strings.Contains(v.Status.Message, "hostname UNIQUE 3"),
			fmt.Sprintf("%d running, %s %q", running, v.Status.State, v.Status.Message)
	})
	if code, body := s.call("POST", "/v1/apps/demo/crowded/scale", []byte(`{"instances":3}`)); code != 202 {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.eventuallyWithin(5*time.Second, "Running within 5s of the scale-down", func() (bool, string) {
		v, _ := s.app("demo", "crowded")
		return v.Status.State == "Running" && v.Status.Message == "" && len(v.Status.Instances) == 3, v.Status.State + " " + v.Status.Message
	})
}

// Scale 3→5→2 and delete; afterwards no process, cgroup or sandbox
// directory of the application is left.
func TestScaleAndDelete(t *testing.T) {
	s := startSystem(t)
	m := s.manifest("process.json", func(m map[string]any) {
		m["metadata"].(map[string]any)["name"] = "scaler"
		delete(m, "constraint")
	})
	if code, body := s.call("POST", "/v1/apps", m); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.running("demo", "scaler", 3)
	scale := func(n int) {
		if code, body := s.call("POST", "/v1/apps/demo/scaler/scale", []byte(fmt.Sprintf(`{"instances":%d}`, n))); code != 202 {
			t.Fatalf("scale %d: %d %s", n, code, body)
		}
	}
	scale(5)
	five := s.running("demo", "scaler", 5)
	// /metrics says what the scheduler did and how it stands.
	s.eventually("/metrics to count the five running", func() (bool, string) {
		got := map[string]float64{
			"running":         s.metric("bcs_scheduler_instances", "phase", "Running"),
			"launches":        s.metric("bcs_scheduler_launches_total"),
			"time to running": s.metric("bcs_scheduler_time_to_running_seconds"),
			"acknowledged":    s.metric("bcs_scheduler_status_ack_seconds"),
			"steps":           s.metric("bcs_scheduler_step_seconds"),
			"offers accepted": s.metric("bcs_scheduler_offers_total", "result", "accepted"),
			"ACCEPT calls":    s.metric("bcs_scheduler_mesos_call_seconds", "type", "ACCEPT"),
			"store writes":    s.metric("bcs_scheduler_store_write_seconds"),
			"TASK_RUNNING":    s.metric("bcs_scheduler_status_updates_total", "state", "TASK_RUNNING"),
		}
		return got["running"] == 5 && got["launches"] >= 5 && got["time to running"] >= 5 && got["acknowledged"] >= 5 && got["steps"] >= 5 &&
			got["offers accepted"] >= 1 && got["ACCEPT calls"] >= 1 && got["store writes"] >= 10 && got["TASK_RUNNING"] >= 5, fmt.Sprint(got)
	})
	var pids []int
	for _, inst := range five {
		pids = append(pids, pidOf(t, s.runPath(inst.Host, fmt.Sprintf("demo.scaler.%d", inst.ID), "gamesvr.pid")))
	}
	scale(2)
	two := s.running("demo", "scaler", 2)
	for _, inst := range two {
		if inst.ID > 1 {
			t.Errorf("instance %d survived scale-down to 2", inst.ID)
		}
	}
	for _, pid := range pids[2:] {
		if alive(pid) {
			t.Errorf("process %d of a removed instance still runs", pid)
		}
	}
	if code, body := s.call("DELETE", "/v1/apps/demo/scaler", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("the application gone", func() (bool, string) {
		_, code := s.app("demo", "scaler")
		return code == 404, fmt.Sprint(code)
	})
	s.eventually("every process, cgroup and sandbox gone", func() (bool, string) {
		var left []string
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, fmt.Sprintf("pid %d", pid))
			}
		}
		left = append(left, matching(filepath.Join(s.dir, "mesos"), "demo_scaler_")...)
		left = append(left, matching("/sys/fs/cgroup/memory", "demo_scaler_")...)
		return len(left) == 0, strings.Join(left, ", ")
	})
}

// Kill -9 of bcs-scheduler while instances run; after it comes back the
// same instances are still RUNNING — no relaunch, no duplicate: framework
// failover plus reconciliation.
func TestSchedulerCrashKeepsInstances(t *testing.T) {
	s := startSystem(t)
	if code, body := s.call("POST", "/v1/apps", s.manifest("process.json", nil)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := s.running("demo", "gamesvr", 3)
	s.killScheduler()
	s.startScheduler()
	after := s.running("demo", "gamesvr", 3)
	for i := range before {
		if before[i].TaskGroupID != after[i].TaskGroupID || after[i].Restarts != 0 {
			t.Errorf("instance %d: %s became %s (restarts %d)", i, before[i].TaskGroupID, after[i].TaskGroupID, after[i].Restarts)
		}
	}
	// Nothing else runs: exactly three gamesvr executors' pid files.
	files, _ := filepath.Glob(s.runPath("*", "demo.gamesvr.*", "gamesvr.pid"))
	if len(files) != 3 {
		t.Errorf("pid files %v, want 3", files)
	}
}

// Invalid manifests are refused with 400 naming the field, and nothing is
// stored.
func TestInvalidManifests(t *testing.T) {
	s := startSystem(t)
	valid := s.manifest("process.json", nil)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(valid, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	process := func(m map[string]any) map[string]any {
		return m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["processes"].([]any)[0].(map[string]any)
	}
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"broken JSON", valid[:len(valid)/2], "invalid JSON at line"},
		{"unknown field", edit(func(m map[string]any) { process(m)["procNmae"] = "x" }),
			"spec.template.spec.processes[0].procNmae: unknown field"},
		{"bad constraint", edit(func(m map[string]any) {
			m["constraint"] = map[string]any{"intersectionItem": []any{map[string]any{"unionData": []any{
				map[string]any{"name": "idc", "operate": "MAXPER", "type": 3, "text": map[string]any{"value": "many"}}}}}}
		}), "constraint.intersectionItem[0].unionData[0].text.value: MAXPER needs a positive integer"},
		{"bad variable", edit(func(m map[string]any) { process(m)["startCmd"] = "./start.sh ${ports.nope}" }),
			"spec.template.spec.processes[0].startCmd: unknown variable"},
	}
	for _, tc := range cases {
		code, body := s.call("POST", "/v1/apps", tc.body)
		if code != 400 || !bytes.Contains(body, []byte(tc.want)) {
			t.Errorf("%s: %d %s, want 400 naming %q", tc.name, code, body, tc.want)
		}
	}
	if _, body := s.call("GET", "/v1/apps", nil); !bytes.Contains(body, []byte(`"apps": []`)) {
		t.Errorf("something was stored: %s", body)
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is dead for our purposes.
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(data), ") Z ")
}

// matching lists the paths under root whose name contains part.
func matching(root, part string) []string {
	var found []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), part) {
			found = append(found, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return found
}

// deploy/mesos/verify.sh, the operator's check of a cluster,
// passes against a working system: both examples run, answer on their
// host ports and are deleted.
func TestVerifyScript(t *testing.T) {
	s := startSystem(t)
	cmd := exec.Command("../deploy/mesos/verify.sh", s.api)
	cmd.Env = append(s.clientEnv(), "VERIFY_TIMEOUT=60")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verify: OK") {
		t.Fatalf("verify.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"bcs-verify/gamesvr is Running", "bcs-verify/web answers on 127.0.0.1:", "bcs-verify/web deleted"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verify.sh output lacks %q:\n%s", want, out)
		}
	}
}
