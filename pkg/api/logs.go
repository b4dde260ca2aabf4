package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesosfiles"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Task logs: GET /v1/taskgroups/{id}/logs reads a task's stdout or stderr
// where both executors keep them, <taskID>.stdout and <taskID>.stderr in
// the executor's sandbox, through its agent's files API — on a Mesos
// agent as on the dev cluster's — and with follow=true keeps reading.

// Limits of a log request's tail, in bytes.
const (
	DefaultLogTail = 1 << 20
	MaxLogTail     = 16 << 20
)

// DefaultLogPollInterval is how often a followed log is read again.
const DefaultLogPollInterval = time.Second

// logReadLength is what one read of the agent asks for; the agent gives
// at most 16 pages.
const logReadLength = 1 << 20

// LogsConfig configures GET /v1/taskgroups/{id}/logs.
type LogsConfig struct {
	// Files reads the agents' files API; nil is a mesosfiles.Client with
	// its defaults.
	Files *mesosfiles.Client
	// PollInterval is how often a followed log is read again; default
	// DefaultLogPollInterval.
	PollInterval time.Duration
	// Clock drives the polling; nil is the server's.
	Clock clockwork.Clock
}

func (c LogsConfig) withDefaults(clock clockwork.Clock) LogsConfig {
	if c.Files == nil {
		c.Files = &mesosfiles.Client{}
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultLogPollInterval
	}
	if c.Clock == nil {
		c.Clock = clock
	}
	return c
}

// logParams are the query parameters of the logs route.
var logParams = []string{"task", "stream", "tail", "follow"}

type logQuery struct {
	task, stream string
	tail         int64
	follow       bool
}

func parseLogQuery(r *http.Request) (logQuery, error) {
	q := r.URL.Query()
	lq := logQuery{task: q.Get("task"), stream: cmp.Or(q.Get("stream"), "stdout"), tail: DefaultLogTail}
	var errs field.ErrorList
	if lq.stream != "stdout" && lq.stream != "stderr" {
		errs = append(errs, field.Invalid("stream", "%q: want stdout or stderr", lq.stream))
	}
	if q.Has("tail") {
		n, err := strconv.ParseInt(q.Get("tail"), 10, 64)
		if err != nil || n < 0 || n > MaxLogTail {
			errs = append(errs, field.Invalid("tail", "%q: want a number of bytes from 0 to %d", q.Get("tail"), MaxLogTail))
		}
		lq.tail = n
	}
	if q.Has("follow") {
		b, err := strconv.ParseBool(q.Get("follow"))
		if err != nil {
			errs = append(errs, field.Invalid("follow", "%q: want true or false", q.Get("follow")))
		}
		lq.follow = b
	}
	return lq, queryError(errs)
}

// logFile is where a task's stream is read: a virtual path of the files
// API of the agent at endpoint.
type logFile struct {
	agent    string // the agent's hostname, or its ID
	endpoint string
	path     string
}

// taskLogs serves GET /v1/taskgroups/{id}/logs?task=&stream=&tail=&follow=:
// the last tail bytes of the task's stream as text/plain, then, with
// follow=true, what is written next, each piece flushed as it comes,
// until the client leaves, the server shuts down, or the task ended and
// its file is read to the end.
func (s *Server) taskLogs(w http.ResponseWriter, r *http.Request) error {
	lq, err := parseLogQuery(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	instance, launch, err := s.cfg.Registry.LaunchByID(r.Context(), id)
	if err != nil {
		return err
	}
	task, err := launch.FindTask(lq.task)
	if err != nil {
		return fmt.Errorf("query parameter task: %w", err)
	}
	file, err := s.logFileOf(r.Context(), launch, task, lq.stream)
	if err != nil {
		return err
	}
	files := s.cfg.Logs.Files
	size, err := files.Size(r.Context(), file.endpoint, file.path)
	if err != nil {
		return file.failed(task, lq.stream, err)
	}
	offset := max(0, size-lq.tail)

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if lq.follow {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Accel-Buffering", "no") // nginx: pass each piece on at once
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	write := flushingWriter(w, s.cfg.Events.WriteTimeout)
	if err := write(nil); err != nil { // the client has the headers before any log
		return nil
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopOnShutdown := context.AfterFunc(s.streams, cancel)
	defer stopOnShutdown()

	limit := size
	if lq.follow {
		limit = -1
	}
	ticker := s.cfg.Logs.Clock.NewTicker(s.cfg.Logs.PollInterval)
	defer ticker.Stop()
	for {
		// Whether the task ended is read before its file: once it has,
		// one more pass that finds nothing new means the whole file was
		// sent (the container executor copies a container's last words
		// just after it reported the end).
		ended := lq.follow && s.launchEnded(ctx, instance, id, task.ID)
		read, err := s.sendLog(ctx, file, &offset, limit, write)
		switch {
		case ctx.Err() != nil, errors.Is(err, errClientGone):
			return nil
		case errors.Is(err, errdefs.ErrNotFound): // the sandbox was collected
			return nil
		case err != nil && (!lq.follow || ended):
			slog.Warn("task log ended early", "taskgroup", id, "task", task.ID, "stream", lq.stream, "agent", file.agent, "err", err)
			return nil
		case !lq.follow, ended && read == 0 && err == nil:
			return nil
		}
		select {
		case <-ticker.Chan():
		case <-ctx.Done():
			return nil
		}
	}
}

// errClientGone is a write to the client that failed.
var errClientGone = errors.New("the client is gone")

// sendLog writes the file from *offset up to limit (-1: its end), moving
// *offset; it returns how much it wrote.
func (s *Server) sendLog(ctx context.Context, file logFile, offset *int64, limit int64, write func([]byte) error) (int64, error) {
	var sent int64
	for limit < 0 || *offset < limit {
		n := int64(logReadLength)
		if limit >= 0 {
			n = min(n, limit-*offset)
		}
		data, err := s.cfg.Logs.Files.Read(ctx, file.endpoint, file.path, *offset, n)
		if err != nil {
			return sent, err
		}
		if len(data) == 0 {
			break
		}
		if err := write(data); err != nil {
			return sent, errClientGone
		}
		*offset += int64(len(data))
		sent += int64(len(data))
	}
	return sent, nil
}

// launchEnded tells whether launch id of the instance is over for the
// task: the task ended, or the launch is no longer the instance's.
func (s *Server) launchEnded(ctx context.Context, instance *registry.TaskGroup, id, taskID string) bool {
	g, err := s.cfg.Registry.GetTaskGroup(ctx, instance.Namespace, instance.App, instance.Index)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return true
	case err != nil:
		return false // the store will answer again: keep following
	}
	if g.Ended(id) {
		return true
	}
	for _, t := range g.Launch(id).Tasks {
		if t.ID == taskID {
			return taskEnded(t.State)
		}
	}
	return true
}

// taskEnded tells whether a Mesos task state is terminal.
func taskEnded(state string) bool {
	switch state {
	case "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED", "TASK_GONE", "TASK_GONE_BY_OPERATOR":
		return true
	}
	return false
}

// logFileOf locates a task's stream: the sandbox of the launch's executor
// (its ID is the task group ID) on the launch's agent.
func (s *Server) logFileOf(ctx context.Context, launch *registry.TaskGroup, task *registry.TaskRecord, stream string) (logFile, error) {
	if launch.AgentID == "" {
		return logFile{}, fmt.Errorf("task group %s is not on an agent yet: no logs: %w", launch.ID, errdefs.ErrNotFound)
	}
	fw, err := s.cfg.Registry.FrameworkID(ctx)
	if err != nil {
		return logFile{}, err
	}
	if fw == "" {
		return logFile{}, fmt.Errorf("the scheduler has not registered with Mesos yet: %w", errdefs.ErrUnavailable)
	}
	file := logFile{agent: cmp.Or(launch.Host, launch.AgentID), path: mesosfiles.SandboxPath(fw, launch.ID, task.ID+"."+stream)}
	agent, err := s.cfg.Registry.GetAgent(ctx, launch.AgentID)
	if err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return logFile{}, err
	}
	if agent == nil || agent.Endpoint == "" {
		return logFile{}, &httpError{http.StatusBadGateway, "BadGateway",
			fmt.Sprintf("agent %s (%s) cannot be reached: its address is not known", file.agent, launch.AgentID)}
	}
	file.endpoint = agent.Endpoint
	return file, nil
}

// failed is the answer to a read of the file that failed: the agent has
// no such file (404), or cannot be reached (502).
func (f logFile) failed(task *registry.TaskRecord, stream string, err error) error {
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return fmt.Errorf("no %s of task %s on agent %s (not written yet, or its sandbox was collected): %w", stream, task.ID, f.agent, err)
	case errors.Is(err, errdefs.ErrUnavailable):
		return &httpError{http.StatusBadGateway, "BadGateway", fmt.Sprintf("agent %s cannot be reached: %v", f.agent, err)}
	}
	return err
}
