package changefeed

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// ID is a change's place in the store's history: the etcd revision of
// the transaction that made it and its position among the keys that
// transaction changed. IDs order changes as etcd applied them.
type ID struct {
	Revision int64
	Index    int
}

// wholeRevision is the Index of EndOf: past every change of its revision.
const wholeRevision = math.MaxInt

// EndOf returns the ID that follows every change of revision rev; it
// reads as the bare revision, "1234".
func EndOf(rev int64) ID { return ID{Revision: rev, Index: wholeRevision} }

// String is "revision.index", or "revision" for EndOf(revision).
func (id ID) String() string {
	if id.Index == wholeRevision {
		return strconv.FormatInt(id.Revision, 10)
	}
	return fmt.Sprintf("%d.%d", id.Revision, id.Index)
}

// Before reports whether id comes before other.
func (id ID) Before(other ID) bool {
	return id.Revision < other.Revision || id.Revision == other.Revision && id.Index < other.Index
}

// ParseID reads an ID as String writes it: "1234.2", or "1234" for
// EndOf(1234); errdefs.ErrInvalidArgument otherwise.
func ParseID(s string) (ID, error) {
	revText, indexText, hasIndex := strings.Cut(s, ".")
	rev, err := strconv.ParseInt(revText, 10, 64)
	if err != nil || rev < 0 || revText != strconv.FormatInt(rev, 10) {
		return ID{}, fmt.Errorf("event ID %q: want <revision> or <revision>.<index>, revision a number ≥ 0: %w", s, errdefs.ErrInvalidArgument)
	}
	if !hasIndex {
		return EndOf(rev), nil
	}
	index, err := strconv.Atoi(indexText)
	if err != nil || index < 0 || index == wholeRevision || indexText != strconv.Itoa(index) {
		return ID{}, fmt.Errorf("event ID %q: want <revision>.<index>, index a number ≥ 0: %w", s, errdefs.ErrInvalidArgument)
	}
	return ID{Revision: rev, Index: index}, nil
}
