package devcluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
)

// filesGet asks an agent's files API and returns the status, the
// Content-Type and the body.
func filesGet(t *testing.T, endpoint, route string, query url.Values) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + endpoint + "/files/" + route + "?" + query.Encode())
	if err != nil {
		t.Fatalf("GET /files/%s: %v", route, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// sandboxScript is a custom executor that only leaves files in its
// sandbox and sleeps: stdout and stderr lines, a file of bytes JSON must
// escape or that are not UTF-8, a file larger than one read, a directory.
const sandboxScript = `printf 'line one\nline two\n'; printf 'oops\n' >&2
printf '\377"\\\001x' > raw.bin
head -c 100000 /dev/zero | tr '\0' a > big.txt
mkdir sub
exec sleep 1000`

// The agent's files API as Mesos 1.12 serves it (src/files/files.cpp,
// its tests src/tests/files_tests.cpp) over an executor's sandbox, which
// the agent attaches under the three paths of Framework::addExecutor
// (src/slave/slave.cpp): the virtual /frameworks/<fw>/executors/<e>/runs/latest,
// <work dir>/…/runs/latest and the run directory itself. The sandbox
// stays readable after the executor ended, until the GC removes it.
func TestFilesAPIMatchesMesos(t *testing.T) {
	c := startProcessCluster(t, func(cfg *devcluster.Config) {
		cfg.SandboxGCDelay = devcluster.Duration(3 * time.Second)
	})
	s := subscribe(t, c, frameworkInfo(), jsonCodec)
	o := s.awaitOffer()
	ex := executorInfo(s.fwID, "files-1")
	script := sandboxScript
	ex.Command = &mesos.CommandInfo{Value: &script}
	launchGroup(s, o, ex, taskInfo(o, "t1"))
	agent := o.AgentID.Value
	endpoint, err := c.AgentEndpoint(agent)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := sandboxOf(t, c, agent, s.fwID, "files-1")
	latest := "/frameworks/" + s.fwID + "/executors/files-1/runs/latest"
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	const stdout = "line one\nline two\n"
	// Wait for the script's files: offset=-1 answers the size.
	deadline := time.Now().Add(waitTimeout)
	for {
		_, _, body := filesGet(t, endpoint, "read", q("path", latest+"/sub"))
		code, _, _ := filesGet(t, endpoint, "read", q("path", latest+"/stdout", "offset", "-1"))
		if code == http.StatusOK && string(body) == "Cannot read a directory.\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox is not readable: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}

	size := fmt.Sprint(len(stdout))
	reads := []struct {
		name        string
		query       url.Values
		code        int
		body, ctype string
	}{
		// __read: parameters.
		{"no path", q(), 400, "Expecting 'path=value' in query.\n", "text/plain; charset=utf-8"},
		{"empty path", q("path", ""), 400, "Expecting 'path=value' in query.\n", "text/plain; charset=utf-8"},
		{"offset not a number", q("path", latest+"/stdout", "offset", "hello"), 400, "Failed to parse offset: Failed to convert 'hello' to number.\n", "text/plain; charset=utf-8"},
		{"length not a number", q("path", latest+"/stdout", "length", "hello"), 400, "Failed to parse length: Failed to convert 'hello' to number.\n", "text/plain; charset=utf-8"},
		{"offset below -1", q("path", latest+"/stdout", "offset", "-2"), 400, "Negative offset provided: -2.\n", "text/plain; charset=utf-8"},
		{"length below -1", q("path", latest+"/stdout", "length", "-2"), 400, "Negative length provided: -2.\n", "text/plain; charset=utf-8"},
		// The pailer's first request: no data, the size as offset.
		{"no offset: the size", q("path", latest+"/stdout"), 200, `{"data":"","offset":` + size + `}`, "application/json"},
		{"offset -1: the size", q("path", latest+"/stdout", "offset", "-1", "length", "5"), 200, `{"data":"","offset":` + size + `}`, "application/json"},
		{"whole file", q("path", latest+"/stdout", "offset", "0"), 200, `{"data":"line one\nline two\n","offset":0}`, "application/json"},
		{"length -1: to the end", q("path", latest+"/stdout", "offset", "0", "length", "-1"), 200, `{"data":"line one\nline two\n","offset":0}`, "application/json"},
		{"length", q("path", latest+"/stdout", "offset", "0", "length", "4"), 200, `{"data":"line","offset":0}`, "application/json"},
		{"length 0", q("path", latest+"/stdout", "offset", "3", "length", "0"), 200, `{"data":"","offset":3}`, "application/json"},
		{"from an offset", q("path", latest+"/stdout", "offset", "9"), 200, `{"data":"line two\n","offset":9}`, "application/json"},
		{"at the end", q("path", latest+"/stdout", "offset", size), 200, `{"data":"","offset":` + size + `}`, "application/json"},
		{"past the end: that offset", q("path", latest+"/stdout", "offset", "1000"), 200, `{"data":"","offset":1000}`, "application/json"},
		{"stderr", q("path", latest+"/stderr", "offset", "0"), 200, `{"data":"oops\n","offset":0}`, "application/json"},
		// Bytes are written as they are: only quote, backslash and
		// control characters are escaped (stout's JSON writer).
		{"raw bytes", q("path", latest+"/raw.bin", "offset", "0"), 200, "{\"data\":\"\xff\\\"\\\\\\u0001x\",\"offset\":0}", "application/json"},
		// One read is capped at 16 pages.
		{"capped", q("path", latest+"/big.txt", "offset", "0"), 200, `{"data":"` + strings.Repeat("a", 16*os.Getpagesize()) + `","offset":0}`, "application/json"},
		// The three attached paths, and the path percent-encoded.
		{"work dir latest", q("path", filepath.Dir(sandbox)+"/latest/stdout", "offset", "0", "length", "4"), 200, `{"data":"line","offset":0}`, "application/json"},
		{"run directory", q("path", sandbox+"/stdout", "offset", "0", "length", "4"), 200, `{"data":"line","offset":0}`, "application/json"},
		{"trailing slash of the attached path", q("path", latest+"/", "offset", "0"), 400, "Cannot read a directory.\n", "text/plain; charset=utf-8"},
		// _read and resolve: what is not a readable file.
		{"missing file: empty 404", q("path", latest+"/nothing", "offset", "0"), 404, "", "text/plain; charset=utf-8"},
		{"unattached path", q("path", "/frameworks/other/executors/x/runs/latest/stdout"), 404, "", "text/plain; charset=utf-8"},
		{"below a file", q("path", latest+"/stdout/x"), 404, "", "text/plain; charset=utf-8"},
		{"directory", q("path", latest+"/sub", "offset", "0"), 400, "Cannot read a directory.\n", "text/plain; charset=utf-8"},
		{"out of the sandbox", q("path", latest+"/../..", "offset", "0"), 400, "'" + sandbox + "/../..' is inaccessible.\n", "text/plain; charset=utf-8"},
		{"jsonp", q("path", latest+"/stdout", "offset", "0", "length", "4", "jsonp", "cb"), 200, `cb({"data":"line","offset":0})`, "text/javascript"},
	}
	for _, r := range reads {
		code, ctype, body := filesGet(t, endpoint, "read", r.query)
		if code != r.code || string(body) != r.body || ctype != r.ctype {
			t.Errorf("%s: read?%s = %d %q %.200q, want %d %q %.200q", r.name, r.query.Encode(), code, ctype, body, r.code, r.ctype, r.body)
		}
	}
	// Go's client percent-encodes '/': the path is decoded once.
	if code, _, body := filesGet(t, endpoint, "read", url.Values{"path": {latest + "/stdout"}, "offset": {"0"}, "length": {"4"}}); code != 200 || string(body) != `{"data":"line","offset":0}` {
		t.Errorf("percent-encoded path: %d %s", code, body)
	}

	// browse: the directory's entries sorted, in Mesos' FileInfo model
	// (keys sorted, mtime in seconds as a double, mode as ls shows it),
	// each path the requested one joined with the entry's name.
	code, ctype, body := filesGet(t, endpoint, "browse", q("path", latest+"/"))
	if code != 200 || ctype != "application/json" {
		t.Fatalf("browse: %d %q %s", code, ctype, body)
	}
	entry := regexp.MustCompile(`^\{"gid":"[^"]+","mode":"([-dlrwx]{10})","mtime":\d+\.0,"nlink":\d+,"path":"([^"]+)","size":\d+,"uid":"[^"]+"\}$`)
	var listing []json.RawMessage
	if err := json.Unmarshal(body, &listing); err != nil {
		t.Fatalf("browse: %v: %s", err, body)
	}
	var listed []string
	for _, raw := range listing {
		m := entry.FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("browse entry %s is not Mesos' FileInfo model", raw)
			continue
		}
		listed = append(listed, m[1]+" "+m[2])
	}
	want := []string{"-rw-r--r-- " + latest + "/big.txt", "-rw-r--r-- " + latest + "/raw.bin", "-rw-r--r-- " + latest + "/stderr",
		"-rw-r--r-- " + latest + "/stdout", "drwxr-xr-x " + latest + "/sub"}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Errorf("browse lists\n%s\nwant\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
	for _, b := range []struct {
		name  string
		query url.Values
		code  int
		body  string
	}{
		{"empty directory", q("path", latest+"/sub"), 200, "[]"},
		{"a file lists nothing", q("path", latest+"/stdout"), 200, "[]"},
		{"missing", q("path", latest+"/nothing"), 404, ""},
		{"no path", q(), 400, "Expecting 'path=value' in query.\n"},
	} {
		if code, _, body := filesGet(t, endpoint, "browse", b.query); code != b.code || string(body) != b.body {
			t.Errorf("browse %s: %d %q, want %d %q", b.name, code, body, b.code, b.body)
		}
	}

	// download: the raw bytes as an attachment.
	resp, err := http.Get("http://" + endpoint + "/files/download?" + q("path", latest+"/raw.bin").Encode())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(raw, []byte("\xff\"\\\x01x")) || resp.Header.Get("Content-Disposition") != "attachment; filename=raw.bin" ||
		resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("download: %d %q %v", resp.StatusCode, raw, resp.Header)
	}
	for _, d := range []struct {
		name  string
		query url.Values
		code  int
		body  string
	}{
		{"directory", q("path", latest+"/sub"), 400, "Cannot download a directory.\n"},
		{"missing", q("path", latest+"/nothing"), 404, "404 Not Found."},
		{"no path", q(), 400, "Expecting 'path=value' in query.\n"},
	} {
		if code, _, body := filesGet(t, endpoint, "download", d.query); code != d.code || string(body) != d.body {
			t.Errorf("download %s: %d %q, want %d %q", d.name, code, body, d.code, d.body)
		}
	}

	// debug: the three attached paths, to the run directory.
	_, _, body = filesGet(t, endpoint, "debug", nil)
	var attached map[string]string
	if err := json.Unmarshal(body, &attached); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{latest, filepath.Dir(sandbox) + "/latest", sandbox} {
		if attached[v] != sandbox {
			t.Errorf("debug: %q attached to %q, want the run directory %q (all: %v)", v, attached[v], sandbox, attached)
		}
	}

	// The executor ends: its sandbox stays readable until the GC delay
	// passes, then the paths are detached and the files gone.
	if err := c.KillExecutor(s.fwID, agent, "files-1"); err != nil {
		t.Fatal(err)
	}
	s.await("FAILURE of the executor", isType(scheduler.Event_FAILURE))
	if code, _, body := filesGet(t, endpoint, "read", q("path", latest+"/stdout", "offset", "0")); code != 200 || string(body) != `{"data":"line one\nline two\n","offset":0}` {
		t.Errorf("read after the executor ended: %d %s", code, body)
	}
	deadline = time.Now().Add(waitTimeout)
	for {
		code, _, _ := filesGet(t, endpoint, "read", q("path", latest+"/stdout", "offset", "0"))
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read after the GC delay: %d, want 404", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(sandbox); !os.IsNotExist(err) {
		t.Errorf("sandbox after the GC: %v", err)
	}
	_, _, body = filesGet(t, endpoint, "debug", nil)
	if string(body) != "{}" {
		t.Errorf("debug after the GC: %s", body)
	}
}
