package bcsctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseInstance(t *testing.T) {
	c := &cli{namespace: "demo"}
	for _, tc := range []struct {
		in   string
		want instanceRef
		err  bool
	}{
		{in: "gamesvr/2", want: instanceRef{namespace: "demo", app: "gamesvr", index: 2}},
		{in: "games/gamesvr/0", want: instanceRef{namespace: "games", app: "gamesvr", index: 0}},
		{in: "games_gamesvr_3_7", want: instanceRef{namespace: "games", app: "gamesvr", index: 3, taskGroupID: "games_gamesvr_3_7"}},
		{in: "gamesvr", err: true},
		{in: "gamesvr/x", err: true},
		{in: "gamesvr/-1", err: true},
		{in: "a/b/c/1", err: true},
		{in: "/gamesvr/1", err: true},
		{in: "games_gamesvr_3", err: true},
	} {
		got, err := c.parseInstance(tc.in)
		if tc.err != (err != nil) || !tc.err && got != tc.want {
			t.Errorf("parseInstance(%q) = %+v, %v; want %+v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// apply takes JSON and YAML: a directory's .json, .yaml and
// .yml files (nothing else), YAML files of several documents, stdin of
// either; a broken file is named with what is wrong.
func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", `{"kind": "Configmap", "metadata": {"name": "a", "namespace": "ns"}}`)
	write("b.yaml", "# first\nkind: secret\nmetadata: {name: b}\n---\n---\nkind: process\nmetadata:\n  name: c\n  namespace: ns\n")
	write("c.yml", "kind: depends\nmetadata: {name: d, namespace: ns}\n")
	write("notes.txt", "kind: nothing")
	docs, err := readManifests([]string{dir, "-"}, strings.NewReader("kind: hooktemplate\nmetadata: {name: e}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.source+" "+d.kind+" "+d.namespace+"/"+d.name)
		if !json.Valid(d.data) {
			t.Errorf("%s: not JSON: %s", d.source, d.data)
		}
	}
	want := []string{
		filepath.Join(dir, "a.json") + " configmap ns/a",
		filepath.Join(dir, "b.yaml") + " (document 1) secret /b",
		filepath.Join(dir, "b.yaml") + " (document 3) process ns/c",
		filepath.Join(dir, "c.yml") + " depends ns/d",
		"stdin hooktemplate /e",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("read:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A syntax error is named by line and column of the file, as the
	// server names one in JSON it is sent.
	for _, c := range []struct{ name, content, says string }{
		{"dup.yaml", "kind: secret\nkind: configmap\n", `dup.yaml: invalid YAML at line 2, column 1: mapping key "kind" already defined at line 1`},
		{"bad.json", "{\"kind\": \"secret\",\n \"metadata\": {\"name\": \"x\",}}",
			"bad.json: invalid JSON at line 2, column 27 (offset 45): invalid character '}' looking for beginning of object key string"},
		{"indent.yaml", "kind: configmap\nmetadata: {name: a}\n---\nkind: configmap\nmetadata:\n  name: b\n   namespace: y\n",
			"indent.yaml (document 2): invalid YAML at line 7, column 13: mapping values are not allowed in this context"},
		{"tab.yaml", "kind: secret\nmetadata:\n\tname: x\n", "tab.yaml: invalid YAML at line 3, column 1: found character that cannot start any token"},
		{"nokind.yml", "metadata: {name: x}\n", "nokind.yml: kind: required"},
		{"empty.yaml", "---\n", "empty.yaml: no manifest in it"},
	} {
		write(c.name, c.content)
		if _, err := readManifests([]string{filepath.Join(dir, c.name)}, nil); err == nil || !strings.HasSuffix(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
	}
}

// apply's "unchanged": the stored spec is the manifest as the server
// reads it, defaults filled in.
func TestSameManifest(t *testing.T) {
	local, err := os.ReadFile("../../examples/process.json")
	if err != nil {
		t.Fatal(err)
	}
	var apps struct {
		Apps []appView `json:"apps"`
	}
	if err := json.Unmarshal(view(t, "apps.json"), &apps); err != nil {
		t.Fatal(err)
	}
	for _, app := range apps.Apps {
		if app.Name != "gamesvr" {
			continue
		}
		if !sameManifest(local, app.Spec) {
			t.Errorf("examples/process.json is not the spec it was stored as:\n%s", app.Spec)
		}
		changed := bytes.Replace(local, []byte(`"instance": 3`), []byte(`"instance": 4`), 1)
		if sameManifest(changed, app.Spec) {
			t.Error("a manifest with another instance count is the same")
		}
		return
	}
	t.Fatal("no gamesvr in the captured views")
}

// rollout status is done when every instance runs the current
// revision, failed when the rollout was aborted or stalled (instances
// failed to update: Progressing False), and waits otherwise —
// paused too, and before the scheduler began the revision.
func TestJudgeRollout(t *testing.T) {
	fleet := decode[appView](t, view(t, "deployment-fleet.json"))
	if v, line := judgeRollout(fleet); v != rolloutGoing || line != "Paused: canary step 2/2: paused until promote: 2/4 updated, 4 ready" {
		t.Errorf("paused canary: %v %q", v, line)
	}
	web := decode[appView](t, view(t, "app-web.json"))
	if v, line := judgeRollout(web); v != rolloutDone || line != "every instance runs revision 1" {
		t.Errorf("completed: %v %q", v, line)
	}
	web.Version = 2
	if v, line := judgeRollout(web); v != rolloutGoing || line != "waiting for the scheduler to begin revision 2" {
		t.Errorf("a revision not begun: %v %q", v, line)
	}
	aborted := fleet
	ro := *fleet.Status.Rollout
	ro.Phase, ro.Aborted, ro.Message = "Aborted", true, "aborted (hook age failed): returning to revision 1, 2/4 instances to go"
	aborted.Status.Rollout = &ro
	if v, line := judgeRollout(aborted); v != rolloutFailed || !strings.Contains(line, "rollout of revision 2 aborted: aborted (hook age failed)") {
		t.Errorf("aborted: %v %q", v, line)
	}
	stalled := fleet
	ro = *fleet.Status.Rollout
	ro.Phase, ro.Message = "Progressing", "updating to revision 2: 0/4 updated, 4 ready; 1/4 instances failed to update (instance 3: hot patch refused: …)"
	ro.Conditions = []condition{{Type: "Available", Status: "True"}, {Type: "Progressing", Status: "False", Reason: "InstanceUpdateFailed", Message: ro.Message}}
	stalled.Status.Rollout = &ro
	if v, line := judgeRollout(stalled); v != rolloutFailed || line != "rollout of revision 2 stalled: "+ro.Message {
		t.Errorf("stalled: %v %q", v, line)
	}
}

// On a terminal the progress is one line redrawn in place,
// its bar the instances updated and ready, cut to the width; elsewhere a
// line per change.
func TestProgress(t *testing.T) {
	fleet := decode[appView](t, view(t, "deployment-fleet.json"))
	_, line := judgeRollout(fleet)
	var out bytes.Buffer
	p := &progress{out: &out, terminal: true, width: func() int { return 60 }}
	p.show(fleet, line)
	p.show(fleet, line)
	p.end()
	want := strings.Repeat("\r\x1b[Kfleet [##########----------] 2/4 Paused: canary step 2/2: p", 2) + "\n"
	if out.String() != want {
		t.Errorf("terminal:\n%q\nwant\n%q", out.String(), want)
	}

	out.Reset()
	p = &progress{out: &out, width: func() int { return 60 }}
	p.show(fleet, line)
	p.show(fleet, line)
	p.show(fleet, "every instance runs revision 2")
	p.end()
	want = "deployment demo/fleet: Paused: canary step 2/2: paused until promote: 2/4 updated, 4 ready\n" +
		"deployment demo/fleet: every instance runs revision 2\n"
	if out.String() != want {
		t.Errorf("not a terminal:\n%s\nwant\n%s", out.String(), want)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 119 * time.Second: "119s", 200 * time.Second: "3m20s",
		5 * time.Minute: "5m", 17 * time.Minute: "17m", 5*time.Hour + 3*time.Minute: "5h3m", 20 * time.Hour: "20h",
		76 * time.Hour: "3d4h", 40 * 24 * time.Hour: "40d", 800 * 24 * time.Hour: "2y",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The captured event stream renders one line per event: how long ago
// it was written, its ID (its place in the store's history, not an
// application's revision), its object and what it says; a reset and an
// overflow say what happened.
func TestEventPrinter(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &cli{env: Env{Out: &out, Now: func() time.Time { return now }}}
	print := c.eventPrinter("", true)
	for i, e := range capturedEvents(t)[:6] {
		e.Time = now.Add(-time.Duration(6-i) * 30 * time.Second)
		print(e)
	}
	print(eventView{ID: "900", Type: "reset", Revision: 900, Message: "history compacted; list the state again, events go on from here"})
	golden(t, "events", out.Bytes())

	out.Reset()
	print = c.eventPrinter("json", false)
	e := capturedEvents(t)[0]
	print(e)
	if out.String() != e.data+"\n" {
		t.Errorf("-o json: %q, want the stream's data %q", out.String(), e.data)
	}
}
