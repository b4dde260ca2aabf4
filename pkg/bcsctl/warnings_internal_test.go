package bcsctl

import (
	"slices"
	"testing"
)

// RFC 7234 §5.5: warning = warn-code SP warn-agent SP warn-text
// [SP warn-date], several to a header value separated by commas; a
// value bcsctl cannot parse is shown whole rather than dropped.
func TestWarningTexts(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
		want   []string
	}{
		{"the API's", []string{`299 - "spec.instance 6 not applied: autoscaler demo/fleet scales demo/fleet"`},
			[]string{"spec.instance 6 not applied: autoscaler demo/fleet scales demo/fleet"}},
		{"escaped quotes", []string{`299 - "the \"fleet\" autoscaler"`}, []string{`the "fleet" autoscaler`}},
		{"two in one value with a date", []string{`299 api:8080 "one" "Sat, 28 Nov 2026 04:00:00 GMT", 299 - "two"`}, []string{"one", "two"}},
		{"two headers", []string{`299 - "one"`, `299 - "two"`}, []string{"one", "two"}},
		{"not RFC 7234", []string{"disk almost full"}, []string{"disk almost full"}},
		{"unterminated", []string{`299 - "one`}, []string{`299 - "one`}},
	} {
		if got := warningTexts(c.values); !slices.Equal(got, c.want) {
			t.Errorf("%s: warningTexts(%q) = %q, want %q", c.name, c.values, got, c.want)
		}
	}
}
