package identity

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Names a Rule's Users may hold besides user names.
const (
	// AnyUser admits every user but root and the uids of other
	// namespaces.
	AnyUser = "*"
	// Root admits root: "root", uid 0, group 0.
	Root = "root"
)

// DefaultRange is bcs-scheduler's --namespace-uids default.
const DefaultRange = "20000-29999"

// Range is the closed range of uids namespaces are given, one each. The
// zero Range gives none: identities are off.
type Range struct{ First, Last uint32 }

// ParseRange reads "FIRST-LAST"; "" is the zero Range.
func ParseRange(s string) (Range, error) {
	if s == "" {
		return Range{}, nil
	}
	first, last, ok := strings.Cut(s, "-")
	lo, err1 := strconv.ParseUint(first, 10, 32)
	hi, err2 := strconv.ParseUint(last, 10, 32)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Range{}, fmt.Errorf("%q: want FIRST-LAST, two uids such as %s", s, DefaultRange)
	case lo == 0:
		return Range{}, fmt.Errorf("%q: uid 0 is root's, not a namespace's", s)
	case hi < lo:
		return Range{}, fmt.Errorf("%q: the last uid is below the first", s)
	case hi == math.MaxUint32:
		return Range{}, fmt.Errorf("%q: %d is no uid (it stands for -1)", s, hi)
	}
	return Range{First: uint32(lo), Last: uint32(hi)}, nil
}

// Off reports whether r gives no uid.
func (r Range) Off() bool { return r == Range{} }

// Contains reports whether uid is one of r's.
func (r Range) Contains(uid uint32) bool { return !r.Off() && uid >= r.First && uid <= r.Last }

// Size is how many uids r holds.
func (r Range) Size() int {
	if r.Off() {
		return 0
	}
	return int(r.Last-r.First) + 1
}

func (r Range) String() string {
	if r.Off() {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// isRootID reports whether id, a user or group, is root's: "root" or
// 0 (also "00").
func isRootID(id string) bool {
	n, ok := numeric(id)
	return id == Root || ok && n == 0
}

// numeric reads a decimal id.
func numeric(id string) (uint32, bool) {
	n, err := strconv.ParseUint(id, 10, 32)
	return uint32(n), err == nil
}

// Rule says which users the workloads of one namespace may name.
type Rule struct {
	// Users are those the namespace's admission policy lists: names,
	// numeric ids, AnyUser, Root.
	Users []string
	// Own is the namespace's own uid (and gid); 0 when it has none yet.
	Own uint32
	// Range is --namespace-uids: its uids other than Own belong to other
	// namespaces.
	Range Range
}

// NewRule is the rule of a namespace whose policy lists users and whose
// own uid is own, under the range uids ("FIRST-LAST", as ParseRange).
func NewRule(users []string, own uint32, uids string) (Rule, error) {
	r, err := ParseRange(uids)
	if err != nil {
		return Rule{}, err
	}
	return Rule{Users: users, Own: own, Range: r}, nil
}

// Check returns why user ("name", "uid", either with ":group") may not be
// named, or nil. No user is the namespace's own, always allowed; so is
// its own uid.
func (r Rule) Check(user string) error {
	if user == "" {
		return nil
	}
	name, group, hasGroup := strings.Cut(user, ":")
	ids := []string{name}
	if hasGroup {
		ids = append(ids, group)
	}
	own := true
	for _, id := range ids {
		if isRootID(id) {
			return r.root()
		}
		n, ok := numeric(id)
		if ok {
			if err := r.other(n); err != nil {
				return err
			}
		}
		own = own && ok && n == r.Own && r.Own != 0
	}
	if own || slices.Contains(r.Users, AnyUser) || slices.Contains(r.Users, user) || slices.Contains(r.Users, name) {
		return nil
	}
	return fmt.Errorf("running as %q is not allowed (allowed: %s)", user, r.allowed())
}

// CheckID returns why a process may not run as uid:gid, what a user the
// rule admitted by name resolved to on an agent: root's ids only when
// Root is listed, never another namespace's.
func (r Rule) CheckID(uid, gid uint32) error {
	if uid == 0 || gid == 0 {
		return r.root()
	}
	if err := r.other(uid); err != nil {
		return err
	}
	return r.other(gid)
}

func (r Rule) root() error {
	if slices.Contains(r.Users, Root) {
		return nil
	}
	return errors.New("running as root is not allowed")
}

// other refuses an id of the range that is not the namespace's own.
func (r Rule) other(id uint32) error {
	if r.Range.Contains(id) && id != r.Own {
		return fmt.Errorf("id %d belongs to another namespace (--namespace-uids %s gives each namespace its own)", id, r.Range)
	}
	return nil
}

// allowed says what the rule admits, for messages.
func (r Rule) allowed() string {
	own := "no \"user\" (the namespace's own uid)"
	if r.Range.Off() {
		own = "no \"user\" (the executor's default user)"
	}
	if len(r.Users) == 0 {
		return own + " only"
	}
	return own + ", " + strings.Join(r.Users, ", ")
}
