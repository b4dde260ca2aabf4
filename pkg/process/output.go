package process

import (
	"io"
	"os"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// outputMark is where one start's output begins in its task's log
// files, which every start of the task appends to.
type outputMark struct{ stdout, stderr int64 }

// markOutput notes the log files' sizes before a start.
func markOutput(stdout, stderr *os.File) outputMark {
	size := func(f *os.File) int64 {
		if info, err := f.Stat(); err == nil {
			return info.Size()
		}
		return 0
	}
	return outputMark{stdout: size(stdout), stderr: size(stderr)}
}

// outputOf is the end of what inst's start wrote, as a failure message
// ends with it (taskstate.QuoteOutput): its stderr if it wrote any, else
// its stdout; "" when it wrote nothing.
func (t *task) outputOf(inst *instance) string {
	for _, s := range []struct {
		stream string
		from   int64
	}{{"stderr", inst.output.stderr}, {"stdout", inst.output.stdout}} {
		out, cut := readFrom(logPath(t.rt.cfg.LogDir, t.id, s.stream), s.from)
		if quoted := taskstate.QuoteOutput(s.stream, out, cut); quoted != "" {
			return quoted
		}
	}
	return ""
}

// readFrom is the end of the file at path from offset from, at most
// taskstate.OutputTailBytes of it; cut says there was more.
func readFrom(path string, from int64) (out []byte, cut bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() <= from {
		return nil, false
	}
	start := max(from, info.Size()-taskstate.OutputTailBytes)
	out = make([]byte, info.Size()-start)
	if _, err := f.ReadAt(out, start); err != nil && err != io.EOF {
		return nil, false
	}
	return out, start > from
}
