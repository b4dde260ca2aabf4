package taskstate

import (
	"bytes"
	"fmt"
	"strings"
)

// A failed task's message quotes at most OutputTailLines lines and
// OutputTailBytes bytes of what it wrote last: the line that says why
// ("bind: address already in use") was otherwise only in the sandbox.
const (
	OutputTailLines = 5
	OutputTailBytes = 512
)

// QuoteOutput is how a failure message ends with the end of out, what a
// task wrote on stream: `; last stderr: "…"`, cut to the bounds above (a
// cut start marked "…", as when cut says out is already the end of
// more); "" when out holds nothing but blank lines.
func QuoteOutput(stream string, out []byte, cut bool) string {
	out = bytes.TrimRight(out, "\r\n")
	if len(bytes.TrimSpace(out)) == 0 {
		return ""
	}
	if len(out) > OutputTailBytes {
		out, cut = out[len(out)-OutputTailBytes:], true
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) > OutputTailLines {
		lines, cut = lines[len(lines)-OutputTailLines:], true
	}
	tail := strings.ToValidUTF8(strings.Join(lines, "\n"), "�")
	if cut {
		tail = "…" + tail
	}
	return fmt.Sprintf("; last %s: %q", stream, tail)
}
