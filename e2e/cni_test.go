package e2e_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cniNetwork writes a CNI network "bcs-e2e": a bridge of its own and a
// private /24 from host-local (Debian's containernetworking-plugins, which
// make test installs), and returns the container executor's flags for it.
func cniNetwork(t *testing.T) (args []string, bridge, ipamDir string) {
	t.Helper()
	dir := t.TempDir()
	bridge, ipamDir = "bcse2e0", filepath.Join(dir, "ipam")
	_ = exec.Command("ip", "link", "del", bridge).Run()
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	conf := map[string]any{
		"cniVersion": "1.0.0", "name": "bcs-e2e",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": bridge, "isGateway": true, "ipMasq": false,
			"ipam": map[string]any{"type": "host-local", "dataDir": ipamDir,
				"ranges": [][]map[string]string{{{"subnet": "10.254.199.0/24"}}}},
		}},
	}
	data, _ := json.Marshal(conf)
	confDir := filepath.Join(dir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-bcs-e2e.conflist"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{
		"--cni-plugin-dir=/usr/lib/cni", "--cni-conf-dir=" + confDir, "--cni-cache-dir=" + filepath.Join(dir, "cache"),
	} {
		args = append(args, "--container-executor-arg="+a)
	}
	return args, bridge, ipamDir
}

const cniApp = `{
  "apiVersion": "v4", "kind": "application",
  "metadata": {"name": "cnisvc", "namespace": "demo"},
  "restartPolicy": {"policy": "Always", "interval": 2},
  "killPolicy": {"gracePeriod": 1},
  "spec": {"instance": 3, "template": {"spec": {
    "networkType": "cni", "networkMode": "bcs-e2e",
    "containers": [{
      "image": "bcs-test/busybox:latest", "imagePullPolicy": "IfNotPresent",
      "command": "/bin/sh", "args": ["-c", "mkdir -p /tmp/www && echo ok >/tmp/www/check && exec httpd -f -p 8080 -h /tmp/www"],
      "ports": [{"name": "http", "containerPort": 8080, "protocol": "HTTP"}],
      "healthChecks": [{"type": "HTTP", "intervalSeconds": 2, "timeoutSeconds": 1, "consecutiveFailures": 3,
                        "gracePeriodSeconds": 10, "http": {"portName": "http", "path": "/check"}}],
      "resources": {"limits": {"cpu": "0.1", "memory": "16"}}
    }]
  }}}
}`

// TestScaleAndDelete's CNI half: a CNI application scaled 3→5→2 and
// deleted leaves no container, no veth on the bridge, no host-local IP
// allocation and no sandbox directory.
func TestCNIScaleAndDelete(t *testing.T) {
	args, bridge, ipamDir := cniNetwork(t)
	s := startSystem(t, args...)
	if code, body := s.call("POST", "/v1/apps", []byte(cniApp)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	s.running("demo", "cnisvc", 3)
	for _, n := range []int{5, 2} {
		if code, body := s.call("POST", "/v1/apps/demo/cnisvc/scale", []byte(fmt.Sprintf(`{"instances":%d}`, n))); code != 202 {
			t.Fatalf("scale %d: %d %s", n, code, body)
		}
		s.running("demo", "cnisvc", n)
	}
	// TASK_KILLED comes once the containers stop; CNI DEL follows (seed
	// 001: business containers, then CNI DEL, then the network container).
	s.eventually("host-local holding the 2 instances' IPs only", func() (bool, string) {
		leases := allocations(ipamDir)
		return len(leases) == 2, strings.Join(leases, " ")
	})
	if code, body := s.call("DELETE", "/v1/apps/demo/cnisvc", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	s.eventually("no container, veth, IP or sandbox of the application", func() (bool, string) {
		var left []string
		if ids := s.podContainers("demo_cnisvc_"); len(ids) > 0 {
			left = append(left, "containers "+strings.Join(ids, " "))
		}
		if ports, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif")); len(ports) > 0 {
			left = append(left, fmt.Sprintf("%d veths on %s", len(ports), bridge))
		}
		if leases := allocations(ipamDir); len(leases) > 0 {
			left = append(left, "IPs "+strings.Join(leases, " "))
		}
		left = append(left, matching(filepath.Join(s.dir, "mesos"), "demo_cnisvc_")...)
		_, code := s.app("demo", "cnisvc")
		return len(left) == 0 && code == 404, strings.Join(left, ", ")
	})
	podAddressSeen(t, s)
}

// A CNI pod is seen at its own address. Its remote checks probe
// it there, where its clients connect: its port by name is the container
// port, and a port that only a process on the agent listens on fails
// instead of passing falsely (they probed the agent: "no port and port
// name \"http\" not found", and the agent's listener answered). The
// executor's variables the docs list are accepted in env (they were a
// 400) and hold what the container sees.
func podAddressSeen(t *testing.T, s *system) {
	agentOnly, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentOnly.Close() })
	go func() {
		for {
			c, err := agentOnly.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	agentPort := agentOnly.Addr().(*net.TCPAddr).Port
	remote := fmt.Sprintf(`"healthChecks": [
        {"type": "REMOTE_HTTP", "intervalSeconds": 2, "timeoutSeconds": 1, "http": {"scheme": "http", "portName": "http", "path": "/check"}},
        {"type": "REMOTE_TCP", "intervalSeconds": 2, "timeoutSeconds": 1, "tcp": {"port": %d}},`, agentPort)
	env := `"env": [{"name": "SELF", "value": "http://${HOST}:${PORT_http}/"}, {"name": "NODE", "value": "${BCS_NODE_ADDR}"},
        {"name": "POD", "value": "${BCS_POD_ID}"}, {"name": "IFACE", "value": "${BCS_CNI_NAME}"}],
      `
	app := strings.NewReplacer(`"name": "cnisvc"`, `"name": "cniprobe"`, `"instance": 3`, `"instance": 1`,
		`"healthChecks": [`, env+remote).Replace(cniApp)
	if code, body := s.call("POST", "/v1/apps", []byte(app)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var checks, ip, taskGroup string
	s.eventually("the pod's port healthy on its IP, the agent's port failing on the pod's IP", func() (bool, string) {
		_, body := s.call("GET", "/v1/apps/demo/cniprobe", nil)
		var v struct {
			Status struct {
				Instances []struct {
					TaskGroupID  string     `json:"taskGroupID"`
					Tasks        []taskView `json:"tasks"`
					RemoteChecks []struct {
						Name, Address, Message string
						Healthy                bool
					} `json:"remoteChecks"`
				} `json:"instances"`
			} `json:"status"`
		}
		_ = json.Unmarshal(body, &v)
		if len(v.Status.Instances) != 1 || len(v.Status.Instances[0].Tasks) != 1 || v.Status.Instances[0].Tasks[0].Container == nil {
			return false, string(body)
		}
		inst := v.Status.Instances[0]
		ip = inst.Tasks[0].Container.IPAddress
		taskGroup = inst.TaskGroupID
		rc := inst.RemoteChecks
		checks = fmt.Sprintf("pod %s: %+v", ip, rc)
		return strings.HasPrefix(ip, "10.254.199.") && len(rc) == 2 &&
			rc[0].Healthy && rc[0].Address == ip+":8080" &&
			!rc[1].Healthy && rc[1].Address == fmt.Sprintf("%s:%d", ip, agentPort) && strings.Contains(rc[1].Message, "connection refused"), checks
	})
	t.Log(checks)
	code, body := s.call("POST", "/v1/taskgroups/"+taskGroup+"/exec", []byte(`{"command": ["env"]}`))
	var res struct{ Output string }
	_ = json.Unmarshal(body, &res)
	for _, want := range []string{"SELF=http://" + ip + ":8080/\n", "NODE=127.0.0.1\n", "\nPOD=", "IFACE=eth"} {
		if code != 200 || !strings.Contains(res.Output, want) || strings.Contains(res.Output, "${") {
			t.Errorf("env of the pod lacks %q or keeps a ${variable}: %d %s", want, code, body)
		}
	}
	if code, body := s.call("DELETE", "/v1/apps/demo/cniprobe", nil); code != 202 {
		t.Fatalf("delete: %d %s", code, body)
	}
	// Gone once its pod's containers are: the record goes with the task's
	// TASK_KILLED, before the executor removed the network container, and
	// the teardown's kill of the executor would leave that running.
	s.eventually("cniprobe deleted, no container left", func() (bool, string) {
		_, code := s.app("demo", "cniprobe")
		ids := s.podContainers("demo_cniprobe_")
		return code == 404 && len(ids) == 0, fmt.Sprint(code, ids)
	})
}

// allocations lists the IPs host-local holds for the network.
func allocations(ipamDir string) []string {
	entries, _ := os.ReadDir(filepath.Join(ipamDir, "bcs-e2e"))
	var ips []string
	for _, e := range entries {
		if strings.Count(e.Name(), ".") == 3 {
			ips = append(ips, e.Name())
		}
	}
	return ips
}
