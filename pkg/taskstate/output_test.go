package taskstate_test

import (
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
)

// A failure quotes the end of the output, bounded in lines and bytes, a
// cut marked; nothing for blank output.
func TestQuoteOutput(t *testing.T) {
	long := strings.Repeat("x", 600)
	for _, tc := range []struct {
		out  string
		cut  bool
		want string
	}{
		{"bind: address already in use\n", false, `; last stderr: "bind: address already in use"`},
		{"1\n2\n3\n4\n5\n6\n7\n", false, `; last stderr: "…3\n4\n5\n6\n7"`},
		{"tail\n", true, `; last stderr: "…tail"`},
		{long, false, `; last stderr: "…` + long[:taskstate.OutputTailBytes] + `"`},
		{"\n \n", false, ""},
		{"bad \xff byte", false, `; last stderr: "bad � byte"`},
	} {
		if got := taskstate.QuoteOutput("stderr", []byte(tc.out), tc.cut); got != tc.want {
			t.Errorf("QuoteOutput(%q, %v) = %q, want %q", tc.out, tc.cut, got, tc.want)
		}
	}
}
