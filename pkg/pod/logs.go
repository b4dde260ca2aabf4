package pod

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// LogFile is where a task's stream ("stdout" or "stderr") is kept in the
// sandbox: <taskID>.stdout and <taskID>.stderr, the process executor's
// names, so that one reader (the agent's files API) serves both kinds.
func LogFile(sandboxDir, taskID, stream string) string {
	return filepath.Join(sandboxDir, taskID+"."+stream)
}

// logRetry is how long a log copier waits before it reads a container's
// log again when its stream ended and no restart explains why.
const logRetry = time.Second

// logDrainTimeout bounds how long the teardown waits for the copiers to
// write a finished container's last output.
const logDrainTimeout = 10 * time.Second

// copyLogs appends the output of t's container to its LogFiles,
// following the task across in-place restarts (the same container) and
// re-creations (a new one) until its container is over. It reads
// docker's log of the container (docker logs --follow --timestamps): the
// log outlives the container's stops, so nothing written while no stream
// was open is lost, and each stream's timestamps only grow, so a message
// read again is not written twice.
func (p *Pod) copyLogs(t *task) {
	defer p.logCopiers.Done()
	stdout, err := os.OpenFile(LogFile(p.cfg.SandboxDir, t.id, "stdout"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(LogFile(p.cfg.SandboxDir, t.id, "stderr"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer stderr.Close()
	out, errOut := &logStream{file: stdout}, &logStream{file: stderr}
	var id string
	for {
		p.mu.Lock()
		current, gen := t.containerID, t.restartGen
		p.mu.Unlock()
		if current != id { // a new container: its log from the start
			id = current
			out.last, errOut.last = time.Time{}, time.Time{}
		}
		over := closed(t.exited)
		_ = p.cfg.Docker.Logs(docker.LogsOptions{
			Context: p.logsCtx, Container: id, OutputStream: out, ErrorStream: errOut,
			Stdout: true, Stderr: true, Timestamps: true, Follow: !over, Since: since(out, errOut),
		})
		if over || p.logsCtx.Err() != nil {
			return
		}
		// The stream ended: the container stopped (it exited, or it is
		// being restarted or re-created in place), or dockerd ended it.
		p.mu.Lock()
		restarting, restarted := t.restarting, t.restartGen != gen
		p.mu.Unlock()
		if restarted && restarting == nil {
			continue
		}
		select {
		case <-t.exited:
		case <-restarting: // nil when none runs: waits for the others
		case <-p.cfg.Clock.After(logRetry):
		case <-p.logsCtx.Done():
			return
		}
	}
}

// lastOutput is the end of what t's container wrote, as its failure
// message ends with it (taskstate.QuoteOutput): its stderr if it wrote
// any, else its stdout.
func (p *Pod) lastOutput(t *task) string {
	p.mu.Lock()
	id := t.containerID
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.logsCtx, 5*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := p.cfg.Docker.Logs(docker.LogsOptions{Context: ctx, Container: id, OutputStream: &stdout, ErrorStream: &stderr,
		Stdout: true, Stderr: true, Tail: strconv.Itoa(taskstate.OutputTailLines)})
	if err != nil {
		return ""
	}
	if quoted := taskstate.QuoteOutput("stderr", stderr.Bytes(), false); quoted != "" {
		return quoted
	}
	return taskstate.QuoteOutput("stdout", stdout.Bytes(), false)
}

// awaitLogs waits for the log copiers to write what the pod's finished
// containers wrote, cutting off those dockerd keeps waiting.
func (p *Pod) awaitLogs() {
	done := make(chan struct{})
	go func() {
		p.logCopiers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-p.cfg.Clock.After(logDrainTimeout):
		p.cancelLogs()
		<-done
	}
	p.cancelLogs()
}

// since is where to read a container's log from again: the earlier of
// the streams' last messages (docker takes whole seconds), or the start
// while a stream has had none.
func since(streams ...*logStream) int64 {
	var from int64
	for i, s := range streams {
		if s.last.IsZero() {
			return 0
		}
		if i == 0 || s.last.Unix() < from {
			from = s.last.Unix()
		}
	}
	return from
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// logStream writes one stream of a container's log to its file: docker
// sends each log message as one frame ("<RFC 3339 timestamp> <message>"
// with --timestamps), which the demultiplexer hands over in one Write.
// The timestamp is cut off, and a message no newer than the last one
// written is skipped.
type logStream struct {
	file io.Writer
	last time.Time
}

func (s *logStream) Write(frame []byte) (int, error) {
	message := frame
	if sp := bytes.IndexByte(frame, ' '); sp > 0 {
		if ts, err := time.Parse(time.RFC3339Nano, string(frame[:sp])); err == nil {
			if !ts.After(s.last) {
				return len(frame), nil
			}
			s.last, message = ts, frame[sp+1:]
		}
	}
	if _, err := s.file.Write(message); err != nil {
		return 0, err
	}
	return len(frame), nil
}

var _ io.Writer = (*logStream)(nil)
