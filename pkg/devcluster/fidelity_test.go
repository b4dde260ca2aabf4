package devcluster_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire/mesoswiretest"
)

// Real Mesos is the oracle: testdata/mesos-1.12 holds what a real 1.12
// master sent a scheduler (SUBSCRIBED, HEARTBEAT, OFFERS) and a real agent
// sent a custom executor of a checkpointing framework (SUBSCRIBED,
// LAUNCH_GROUP). The dev cluster must send the same fields.

// recordedEvents reads a recording: RecordIO frames of JSON.
func recordedEvents(t *testing.T, name string) []map[string]any {
	t.Helper()
	return decodeRecordIO(t, mesoswiretest.Recording(t, name))
}

func decodeRecordIO(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		n, err := strconv.Atoi(string(data[:nl]))
		if err != nil || nl+1+n > len(data) {
			break // a frame still being written
		}
		var m map[string]any
		if err := json.Unmarshal(data[nl+1:nl+1+n], &m); err != nil {
			t.Fatalf("frame: %v", err)
		}
		out = append(out, m)
		data = data[nl+1+n:]
	}
	return out
}

// constantKeys are the fields whose values are protocol constants rather
// than IDs, addresses, names or amounts: they must match, not only exist.
var constantKeys = map[string]bool{
	"type": true, "role": true, "checkpoint": true, "shell": true, "executable": true, "extract": true, "scheme": true,
}

// fields flattens an event into its field paths (array elements as "[]")
// with the values of the constant leaves.
func fields(v any, path string, out map[string][]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			fields(val, strings.TrimPrefix(path+"."+k, "."), out)
		}
	case []any:
		for _, el := range x {
			fields(el, path+"[]", out)
		}
	default:
		key := path[strings.LastIndexByte(path, '.')+1:]
		value := ""
		if constantKeys[key] || strings.HasSuffix(path, "resources[].name") || strings.HasSuffix(path, "attributes[].name") {
			value = fmt.Sprint(x)
		}
		if !slices.Contains(out[path], value) {
			out[path] = append(out[path], value)
		}
	}
}

// compareEvents reports every field one event has and the other lacks,
// and every constant whose values differ.
func compareEvents(t *testing.T, what string, real, dev map[string]any) {
	t.Helper()
	rf, df := map[string][]string{}, map[string][]string{}
	fields(real, "", rf)
	fields(dev, "", df)
	var problems []string
	for _, p := range sortedPaths(rf) {
		got, ok := df[p]
		if !ok {
			problems = append(problems, "missing "+p)
			continue
		}
		sort.Strings(got)
		want := append([]string(nil), rf[p]...)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			problems = append(problems, fmt.Sprintf("%s = %v, real Mesos sends %v", p, got, want))
		}
	}
	for _, p := range sortedPaths(df) {
		if _, ok := rf[p]; !ok {
			problems = append(problems, "extra "+p)
		}
	}
	if len(problems) > 0 {
		t.Errorf("%s differs from the Mesos 1.12 recording:\n  %s", what, strings.Join(problems, "\n  "))
	}
}

func sortedPaths(m map[string][]string) []string {
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// dumpExecutor is a custom executor that keeps what its agent sends: its
// environment, and its event stream in JSON, as raw bytes off the wire.
const dumpExecutor = `#!/bin/sh
env > env.txt
exec curl -sN -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' \
  -d "{\"type\":\"SUBSCRIBE\",\"framework_id\":{\"value\":\"$MESOS_FRAMEWORK_ID\"},\"executor_id\":{\"value\":\"$MESOS_EXECUTOR_ID\"},\"subscribe\":{}}" \
  -o events.recordio "http://$MESOS_AGENT_ENDPOINT/api/v1/executor"
`

// The dev cluster's SUBSCRIBED, HEARTBEAT and OFFERS, and the
// SUBSCRIBED and LAUNCH_GROUP its agent sends a custom executor, have the
// fields of the recordings (IDs, addresses and amounts aside), so the dev
// cluster and real Mesos cannot drift apart again; the executor gets the
// environment of a checkpointing framework.
func TestEventsMatchTheMesos112Recordings(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "dump-executor.sh")
	if err := os.WriteFile(script, []byte(dumpExecutor), 0o755); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, func(cfg *devcluster.Config) {
		cfg.ExecutorMode = devcluster.ExecutorProcess
		cfg.HeartbeatInterval = devcluster.Duration(200 * time.Millisecond)
		cfg.Agents = []devcluster.AgentSpec{{Hostname: "127.0.0.1",
			Resources:  devcluster.ResourceSpec{CPUs: 4, MemMB: 8192, DiskMB: 20000, Ports: []devcluster.PortRange{{Begin: 31000, End: 32000}}},
			Attributes: []devcluster.AttributeSpec{devcluster.TextAttribute("idc", "sz"), devcluster.TextAttribute("rack", "r1")}}}
	})

	// The scheduler: the recording's framework_info, in JSON.
	subscribe := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"bcs","failover_timeout":604800,"checkpoint":true,"role":"*",
		"capabilities":[{"type":"PARTITION_AWARE"},{"type":"TASK_KILLING_STATE"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, c.MasterURL()+"/api/v1/scheduler", strings.NewReader(subscribe))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	dev := map[string]map[string]any{}
	deadline := time.Now().Add(10 * time.Second)
	for len(dev) < 3 && time.Now().Before(deadline) {
		var e map[string]any
		if err := json.Unmarshal(readRecord(t, stream), &e); err != nil {
			t.Fatal(err)
		}
		if typ := e["type"].(string); dev[typ] == nil {
			dev[typ] = e
		}
	}
	for _, real := range recordedEvents(t, mesoswiretest.SchedulerSubscribe) {
		typ := real["type"].(string)
		if dev[typ] == nil {
			t.Fatalf("the dev cluster sent no %s", typ)
		}
		compareEvents(t, "scheduler event "+typ, real, dev[typ])
	}

	// A LAUNCH_GROUP shaped like the recorded one, on the dump executor.
	fwID := dev["SUBSCRIBED"]["subscribed"].(map[string]any)["framework_id"].(map[string]any)["value"].(string)
	offer := dev["OFFERS"]["offers"].(map[string]any)["offers"].([]any)[0].(map[string]any)
	offerID := offer["id"].(map[string]any)["value"].(string)
	agentID := offer["agent_id"].(map[string]any)["value"].(string)
	executor := fmt.Sprintf(`{"type":"CUSTOM","executor_id":{"value":"demo_probe_0_1"},"framework_id":{"value":%q},
		"command":{"uris":[{"value":"file://%s","executable":true,"extract":false}],"shell":false,"value":"./dump-executor.sh",
		"arguments":["dump-executor.sh","--work-base-dir=/w","--run-base-dir=/r"]},
		"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":0.01}},{"name":"mem","type":"SCALAR","scalar":{"value":32}},
		{"name":"disk","type":"SCALAR","scalar":{"value":1}}],"name":"bcs demo/probe instance 0"}`, fwID, script)
	accept := fmt.Sprintf(`{"type":"ACCEPT","framework_id":{"value":%q},"accept":{"offer_ids":[{"value":%q}],"operations":[{"type":"LAUNCH_GROUP",
		"launch_group":{"executor":%s,"task_group":{"tasks":[{"name":"gamesvr","task_id":{"value":"demo_probe_0_1_0"},"agent_id":{"value":%q},
		"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":0.2}},{"name":"mem","type":"SCALAR","scalar":{"value":64}},
		{"name":"ports","type":"RANGES","ranges":{"range":[{"begin":31239,"end":31239}]}}],
		"kill_policy":{"grace_period":{"nanoseconds":5000000000}},"data":"e30="}]}}}]}}`, fwID, offerID, executor, agentID)
	if code, body := rawCall(t, c, "application/json", resp.Header.Get("Mesos-Stream-Id"), accept); code != http.StatusAccepted {
		t.Fatalf("ACCEPT: %d %s", code, body)
	}

	var got []map[string]any
	var sandbox string
	for deadline := time.Now().Add(20 * time.Second); len(got) < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(c.WorkDir(), "agents", agentID, "frameworks", fwID, "executors", "demo_probe_0_1", "runs", "latest", "events.recordio"))
		if len(files) == 1 {
			sandbox, _ = filepath.EvalSymlinks(filepath.Dir(files[0]))
			data, _ := os.ReadFile(files[0])
			got = decodeRecordIO(t, data)
		}
	}
	real := recordedEvents(t, mesoswiretest.ExecutorSubscribe)
	if len(got) < 2 {
		t.Fatalf("the executor got %d events, want SUBSCRIBED and LAUNCH_GROUP", len(got))
	}
	for i := range real {
		compareEvents(t, "executor event "+real[i]["type"].(string), real[i], got[i])
	}

	// mesos-facts.md: the environment of a checkpointing framework's
	// executor, durations in Mesos syntax.
	env, err := os.ReadFile(filepath.Join(sandbox, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	endpoint, _ := c.AgentEndpoint(agentID)
	for _, want := range []string{
		"MESOS_FRAMEWORK_ID=" + fwID, "MESOS_EXECUTOR_ID=demo_probe_0_1", "MESOS_AGENT_ENDPOINT=" + endpoint,
		"MESOS_DIRECTORY=" + sandbox, "MESOS_SANDBOX=" + sandbox, "MESOS_CHECKPOINT=1", "MESOS_HTTP_COMMAND_EXECUTOR=0",
		"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD=5secs", "MESOS_SLAVE_ID=" + agentID, "MESOS_SLAVE_PID=slave(1)@" + endpoint,
		"MESOS_RECOVERY_TIMEOUT=15mins", "MESOS_SUBSCRIPTION_BACKOFF_MAX=2secs",
	} {
		if !bytes.Contains(env, []byte("\n"+want+"\n")) && !bytes.HasPrefix(env, []byte(want+"\n")) {
			t.Errorf("executor environment lacks %s", want)
		}
	}
}
