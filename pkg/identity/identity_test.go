package identity_test

import (
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
)

func TestParseRange(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    identity.Range
		problem string
	}{
		{"", identity.Range{}, ""},
		{identity.DefaultRange, identity.Range{First: 20000, Last: 29999}, ""},
		{"7-7", identity.Range{First: 7, Last: 7}, ""},
		{"0-100", identity.Range{}, "root's"},
		{"200-100", identity.Range{}, "below the first"},
		{"1-4294967295", identity.Range{}, "no uid"},
		{"20000", identity.Range{}, "want FIRST-LAST"},
		{"a-b", identity.Range{}, "want FIRST-LAST"},
		{"-5-10", identity.Range{}, "want FIRST-LAST"},
	} {
		got, err := identity.ParseRange(tt.in)
		switch {
		case tt.problem == "" && (err != nil || got != tt.want):
			t.Errorf("ParseRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
			t.Errorf("ParseRange(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.problem)
		}
	}
	r := identity.Range{First: 20000, Last: 29999}
	if !r.Contains(20000) || !r.Contains(29999) || r.Contains(19999) || r.Contains(30000) || r.Size() != 10000 || r.String() != "20000-29999" {
		t.Errorf("range %v: Contains, Size or String wrong", r)
	}
	if (identity.Range{}).Contains(0) || !(identity.Range{}).Off() {
		t.Error("the zero range must be off and contain nothing")
	}
}

// The admission rule of namespace identities: root by name or uid, other
// namespaces' uids refused even under "*", the namespace's own uid always
// allowed.
func TestRuleCheck(t *testing.T) {
	r := identity.Range{First: 20000, Last: 29999}
	for _, tt := range []struct {
		name  string
		users []string
		user  string
		want  string // "" allowed; else part of the refusal
	}{
		{"no user is the namespace's own", nil, "", ""},
		{"own uid", nil, "20001", ""},
		{"own uid and gid", nil, "20001:20001", ""},
		{"own uid, root's group", nil, "20001:0", "root"},
		{"root by name", []string{"*"}, "root", "running as root is not allowed"},
		{"root by uid", []string{"*"}, "0", "running as root is not allowed"},
		{"root by uid and gid", []string{"*"}, "0:0", "running as root is not allowed"},
		{"root by padded uid", []string{"*"}, "000", "running as root is not allowed"},
		{"root with a group", []string{"*"}, "root:games", "running as root is not allowed"},
		{"root's group", []string{"*"}, "game:root", "running as root is not allowed"},
		{"root listed", []string{"root"}, "0:0", ""},
		{"another namespace's uid under *", []string{"*"}, "20002", "id 20002 belongs to another namespace"},
		{"another namespace's uid listed", []string{"20002"}, "20002", "id 20002 belongs to another namespace"},
		{"another namespace's gid", []string{"*"}, "1000:20002", "id 20002 belongs to another namespace"},
		{"a name, not listed", nil, "nobody", `running as "nobody" is not allowed (allowed: no "user" (the namespace's own uid) only)`},
		{"a name, listed", []string{"game"}, "game", ""},
		{"a name with a group, listed", []string{"game"}, "game:games", ""},
		{"a name under *", []string{"*"}, "nobody", ""},
		{"a name like root's", []string{"*"}, "rooty", ""},
		{"a uid outside the range under *", []string{"*"}, "1000", ""},
		{"a uid outside the range, not listed", []string{"game"}, "1000", `(allowed: no "user" (the namespace's own uid), game)`},
	} {
		err := identity.Rule{Users: tt.users, Own: 20001, Range: r}.Check(tt.user)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %q refused: %v", tt.name, tt.user, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %q: %v, want a refusal saying %q", tt.name, tt.user, err, tt.want)
		}
	}
	// Before the namespace has a uid, every uid of the range is another's.
	if err := (identity.Rule{Users: []string{"*"}, Range: r}).Check("20000"); err == nil {
		t.Error("a uid of the range admitted for a namespace without one")
	}
	// Without a range, numbers are plain users.
	if err := (identity.Rule{Users: []string{"*"}}).Check("20000"); err != nil {
		t.Errorf("without a range: %v", err)
	}
}

func TestRuleCheckID(t *testing.T) {
	r := identity.Rule{Users: []string{"*"}, Own: 20001, Range: identity.Range{First: 20000, Last: 29999}}
	for _, tt := range []struct {
		uid, gid uint32
		ok       bool
	}{{20001, 20001, true}, {1000, 1000, true}, {0, 1000, false}, {1000, 0, false}, {20002, 20002, false}, {1000, 29999, false}} {
		if err := r.CheckID(tt.uid, tt.gid); (err == nil) != tt.ok {
			t.Errorf("CheckID(%d, %d) = %v, want allowed %v", tt.uid, tt.gid, err, tt.ok)
		}
	}
	if err := (identity.Rule{Users: []string{"root"}}).CheckID(0, 0); err != nil {
		t.Errorf("root listed: %v", err)
	}
}
