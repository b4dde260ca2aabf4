package field

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// Path is a dotted field path such as "constraint.intersectionItem[2].unionData[0]".
// The zero value is the root.
type Path string

// Child returns the path of the named field under p.
func (p Path) Child(name string) Path {
	if p == "" {
		return Path(name)
	}
	return Path(string(p) + "." + name)
}

// Index returns the path of element i of the list at p.
func (p Path) Index(i int) Path {
	return Path(string(p) + "[" + strconv.Itoa(i) + "]")
}

// Key returns the path of the map entry key under p.
func (p Path) Key(key string) Path {
	return Path(string(p) + "[" + strconv.Quote(key) + "]")
}

func (p Path) String() string { return string(p) }

// Error is one problem at one field.
type Error struct {
	Path    Path
	Message string
}

func (e Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return string(e.Path) + ": " + e.Message
}

// Invalid returns an Error at p with a formatted message.
func Invalid(p Path, format string, args ...any) Error {
	return Error{Path: p, Message: fmt.Sprintf(format, args...)}
}

// Required returns the standard "required" Error at p.
func Required(p Path) Error { return Error{Path: p, Message: "required"} }

// ErrorList is every problem found in one input. It is an error only when
// non-empty; use ToError to get a nil error for an empty list.
type ErrorList []Error

// Error joins the problems with "; ".
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap makes every validation failure an errdefs.ErrInvalidArgument.
func (l ErrorList) Unwrap() error { return errdefs.ErrInvalidArgument }

// Messages returns each problem as "path: message".
func (l ErrorList) Messages() []string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return msgs
}

// ToError returns nil for an empty list and the list otherwise.
func (l ErrorList) ToError() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
