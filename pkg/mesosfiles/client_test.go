package mesosfiles_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/bcs-mesos/bcs-mesos/internal/testlog"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster"
	"github.com/bcs-mesos/bcs-mesos/pkg/devcluster/devclustertest"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosfiles"
)

// output is what the test's command task writes to its stdout: text,
// bytes that are not UTF-8, a quote, a backslash and control characters.
const output = "héllo \xff\xfe \"quoted\" back\\slash \x01\t\n"

// Reading a command task's stdout through the dev cluster agent's files
// API, by the virtual path of its sandbox: its size, all of it, a part,
// nothing at the end — byte for byte; a file that is not there is
// ErrNotFound, an agent that does not answer ErrUnavailable naming it.
func TestReadThroughTheAgentsFilesAPI(t *testing.T) {
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		ListenAddr: "127.0.0.1:0", AllocationInterval: devcluster.Duration(50 * time.Millisecond),
		ExecutorMode: devcluster.ExecutorProcess, WorkDir: t.TempDir(), Logger: testlog.New(t),
		Agents: []devcluster.AgentSpec{{Hostname: "files-1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	f := devclustertest.Subscribe(t, c.MasterURL(), "files-test")
	o := f.AwaitOffer()
	cmd := `printf '` + strings.NewReplacer(`\`, `\\`, "\xff", `\377`, "\xfe", `\376`, "\x01", `\001`, "\t", `\t`, "\n", `\n`).Replace(output) + `'; exec sleep 1000`
	task := mesos.TaskInfo{Name: "echo", TaskID: mesos.TaskID{Value: "echo-1"}, AgentID: o.AgentID,
		Command:   &mesos.CommandInfo{Value: &cmd},
		Resources: []mesos.Resource{devclustertest.Scalar("cpus", 0.1), devclustertest.Scalar("mem", 32)}}
	f.Call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID)))
	f.AwaitAck("echo-1", mesos.TASK_RUNNING, nil)
	endpoint, err := c.AgentEndpoint(o.AgentID.Value)
	if err != nil {
		t.Fatal(err)
	}
	// A command task's executor ID is its task ID.
	path := mesosfiles.SandboxPath(f.ID, "echo-1", "stdout")
	cl := &mesosfiles.Client{}
	ctx := context.Background()

	deadline := time.Now().Add(10 * time.Second)
	for {
		size, err := cl.Size(ctx, endpoint, path)
		if err == nil && size == int64(len(output)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Size = %d, %v; want %d", size, err, len(output))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, r := range []struct {
		offset, length int64
		want           string
	}{
		{0, 1000, output},
		{1, 6, output[1:7]},
		{int64(len(output)) - 3, 1000, output[len(output)-3:]},
		{int64(len(output)), 1000, ""},
		{5000, 10, ""},
		{0, 0, ""},
	} {
		got, err := cl.Read(ctx, endpoint, path, r.offset, r.length)
		if err != nil || string(got) != r.want {
			t.Errorf("Read(%d, %d) = %q, %v; want %q", r.offset, r.length, got, err, r.want)
		}
	}

	if _, err := cl.Read(ctx, endpoint, mesosfiles.SandboxPath(f.ID, "echo-1", "nothing"), 0, 10); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("a missing file: %v, want ErrNotFound", err)
	}
	if _, err := cl.Size(ctx, endpoint, mesosfiles.SandboxPath(f.ID, "no-such-executor", "stdout")); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("an unknown executor: %v, want ErrNotFound", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	if _, err := cl.Size(ctx, gone, path); !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), gone) {
		t.Errorf("an agent that does not answer: %v, want ErrUnavailable naming %s", err, gone)
	}
}

// The data string decodes as JSON does, except that bytes that are not
// UTF-8 stay as they are.
func TestUnquoteKeepsBytes(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\there \"q\" \\ /", "\u00e9\u4e16\U0001F600", "\x00\x01\x1f\x7f"} {
		quoted, _ := json.Marshal(s)
		got, err := mesosfiles.Unquote(quoted)
		if err != nil || string(got) != s {
			t.Errorf("Unquote(%s) = %q, %v; want %q", quoted, got, err, s)
		}
	}
	for quoted, want := range map[string]string{
		`"\ud83d\ude00"`: "\U0001F600", `"\/"`: "/", "\"\xff\xfe\"": "\xff\xfe", `"\ud83d"`: "\uFFFD",
	} {
		if got, err := mesosfiles.Unquote([]byte(quoted)); err != nil || string(got) != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", quoted, got, err, want)
		}
	}
	for _, bad := range []string{``, `"`, `"\"`, `"\x"`, `"\u12"`, `nul`} {
		if got, err := mesosfiles.Unquote([]byte(bad)); err == nil {
			t.Errorf("Unquote(%s) = %q, want an error", bad, got)
		}
	}
}
