package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"

	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

type state struct {
	cfg       config.Config
	mode      string
	sender    calls.Sender
	executor  mesos.ExecutorInfo
	unacked   map[string]executor.Call_Update // by uuid hex
	launched  map[string]mesos.TaskInfo       // tasks none of whose updates was acknowledged yet
	live      map[string]bool                 // task IDs not yet terminal
	crashNext bool
	quit      bool
}

func main() {
	log.SetPrefix("testexecutor: ")
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	writeEnv(cfg.Sandbox)
	if os.Getenv("TESTEXECUTOR_CHILDREN") == "1" {
		startChildren(cfg.Sandbox)
	}
	codec := codecs.ByMediaType[codecs.MediaTypeProtobuf]
	if os.Getenv("TESTEXECUTOR_CODEC") == "json" {
		codec = mesoswire.JSON
	}
	endpoint := url.URL{Scheme: "http", Host: cfg.AgentEndpoint, Path: "/api/v1/executor"}
	cli := httpcli.New(httpcli.Endpoint(endpoint.String()), httpcli.Codec(codec))
	opts := executor.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)}
	s := &state{
		cfg:      cfg,
		mode:     os.Getenv("TESTEXECUTOR_MODE"),
		sender:   calls.SenderWith(httpexec.NewSender(cli.Send), opts...),
		unacked:  map[string]executor.Call_Update{},
		launched: map[string]mesos.TaskInfo{},
		live:     map[string]bool{},
	}
	subscriber := calls.SenderWith(httpexec.NewSender(cli.Send, httpcli.Close(true)), opts...)
	err = s.serve(subscriber)
	for os.Getenv("TESTEXECUTOR_RESUBSCRIBE") == "1" && !s.quit && s.cfg.Checkpoint {
		log.Printf("event stream ended (%v); subscribing again", err)
		time.Sleep(100 * time.Millisecond)
		err = s.serve(subscriber)
	}
	if os.Getenv("TESTEXECUTOR_STAY") == "1" {
		log.Printf("event stream ended (%v); staying without subscribing again", err)
		select {}
	}
	if err != nil && err != io.EOF {
		log.Fatalf("event loop: %v", err)
	}
	if s.crashNext {
		log.Print("crashing on purpose")
		os.Exit(3)
	}
}

// serve subscribes, with the tasks and updates not acknowledged yet, and
// handles the events until the stream ends.
func (s *state) serve(subscriber calls.Sender) error {
	var tasks []mesos.TaskInfo
	for _, t := range s.launched {
		tasks = append(tasks, t)
	}
	var updates []executor.Call_Update
	for _, u := range s.unacked {
		updates = append(updates, u)
	}
	resp, err := subscriber.Send(context.Background(), calls.NonStreaming(calls.Subscribe(tasks, updates)))
	if err != nil {
		if os.Getenv("TESTEXECUTOR_RESUBSCRIBE") != "1" {
			log.Fatalf("subscribe: %v", err)
		}
		return err
	}
	defer resp.Close()
	return s.loop(resp)
}

func (s *state) loop(dec encoding.Decoder) error {
	for !s.quit {
		var e executor.Event
		if err := dec.Decode(&e); err != nil {
			return err
		}
		if err := s.handle(&e); err != nil {
			return err
		}
	}
	return nil
}

func (s *state) handle(e *executor.Event) error {
	if s.mode == "deaf" && (e.Type == executor.Event_LAUNCH || e.Type == executor.Event_LAUNCH_GROUP) {
		log.Printf("%s ignored", e.Type)
		return nil
	}
	switch e.Type {
	case executor.Event_SUBSCRIBED:
		s.executor = e.Subscribed.ExecutorInfo
		log.Printf("subscribed to agent %s, container %s", e.Subscribed.AgentInfo.Hostname, e.Subscribed.GetContainerID().GetValue())
	case executor.Event_LAUNCH:
		return s.launch(e.Launch.Task)
	case executor.Event_LAUNCH_GROUP:
		for _, t := range e.LaunchGroup.TaskGroup.Tasks {
			if err := s.launch(t); err != nil {
				return err
			}
		}
	case executor.Event_KILL:
		grace := "none"
		if g := e.Kill.GetKillPolicy().GetGracePeriod(); g != nil {
			grace = strconv.FormatInt(g.Nanoseconds, 10)
		}
		appendLine(filepath.Join(s.cfg.Sandbox, "kills.log"), e.Kill.TaskID.Value+" "+grace)
		if s.live[e.Kill.TaskID.Value] {
			delete(s.live, e.Kill.TaskID.Value)
			return s.update(e.Kill.TaskID, mesos.TASK_KILLED)
		}
	case executor.Event_ACKNOWLEDGED:
		id := hex.EncodeToString(e.Acknowledged.UUID)
		delete(s.unacked, id)
		delete(s.launched, e.Acknowledged.TaskID.Value)
		appendLine(filepath.Join(s.cfg.Sandbox, "acks.log"), e.Acknowledged.TaskID.Value+" "+id)
		if s.mode == "crash" && len(s.unacked) == 0 && len(s.live) > 0 {
			s.crashNext, s.quit = true, true
		}
		if s.mode != "run" && s.mode != "crash" && len(s.unacked) == 0 && len(s.live) == 0 {
			s.quit = true
		}
	case executor.Event_MESSAGE:
		msg := calls.Message(append([]byte("echo:"), e.Message.Data...))
		return calls.SendNoData(context.Background(), s.sender, calls.NonStreaming(msg))
	case executor.Event_SHUTDOWN:
		for id := range s.live {
			if err := s.update(mesos.TaskID{Value: id}, mesos.TASK_KILLED); err != nil {
				return err
			}
		}
		s.live = map[string]bool{}
		s.quit = true
	case executor.Event_ERROR:
		return fmt.Errorf("agent error: %s", e.Error.Message)
	}
	return nil
}

func (s *state) launch(t mesos.TaskInfo) error {
	s.live[t.TaskID.Value] = true
	s.launched[t.TaskID.Value] = t
	if err := s.update(t.TaskID, mesos.TASK_RUNNING); err != nil {
		return err
	}
	if s.mode == "run" || s.mode == "crash" {
		return nil
	}
	delete(s.live, t.TaskID.Value)
	return s.update(t.TaskID, mesos.TASK_FINISHED)
}

func (s *state) update(id mesos.TaskID, st mesos.TaskState) error {
	uuid := newUUID()
	healthy := true
	status := mesos.TaskStatus{
		TaskID:     id,
		State:      st.Enum(),
		Source:     mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &mesos.ExecutorID{Value: s.cfg.ExecutorID},
		UUID:       uuid,
		Healthy:    &healthy,
	}
	call := calls.Update(status)
	s.unacked[hex.EncodeToString(uuid)] = *call.Update
	return calls.SendNoData(context.Background(), s.sender, calls.NonStreaming(call))
}

// startChildren starts two sleepers and writes their pids to the sandbox:
// child.pid in a process group of its own (still in the executor's
// session), daemon.pid in a session of its own.
func startChildren(dir string) {
	for name, attr := range map[string]*syscall.SysProcAttr{"child.pid": {Setpgid: true}, "daemon.pid": {Setsid: true}} {
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = attr
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func newUUID() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		log.Fatal(err)
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}

func writeEnv(dir string) {
	var lines []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MESOS_") || strings.HasPrefix(kv, "TESTEXECUTOR_") {
			lines = append(lines, kv)
		}
	}
	sort.Strings(lines)
	wd, _ := os.Getwd()
	lines = append(lines, "PWD="+wd)
	if err := os.WriteFile(filepath.Join(dir, "env.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		log.Fatal(err)
	}
}
