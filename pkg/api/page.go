package api

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"

	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

// Pages of lists and logs. A log (audit, deliveries) pages by default:
// it only grows. A list answers whole without ?limit=, as it always did,
// so a client written before paging still sees everything.
const (
	defaultLogPage = 100
	maxPageLimit   = 1000
)

// withListParams adds the paging parameters to a list route's own.
func withListParams(params ...string) []string { return append(params, "limit", "after") }

// pageLimit reads ?limit=; absent gives absent.
func pageLimit(r *http.Request, absent int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return absent, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPageLimit {
		return 0, queryError(field.ErrorList{field.Invalid(field.Path("limit"), "want 1 to %d, got %q", maxPageLimit, v)})
	}
	return n, nil
}

// listPage is one page of a list ordered by key: the items whose key
// sorts after the request's ?after= (the previous page's next), at most
// ?limit= of them (all when absent).
type listPage struct {
	limit int
	after string
}

func readListPage(r *http.Request) (listPage, error) {
	limit, err := pageLimit(r, 0)
	return listPage{limit: limit, after: r.URL.Query().Get("after")}, err
}

// pageOf returns the page of items (sorted by key here, whatever order
// they came in) and next, the after= of the following page, "" on the
// last. Keys are unique: a list's items are named by them.
func pageOf[T any](p listPage, items []T, key func(T) string) (page []T, next string) {
	slices.SortFunc(items, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	if p.after != "" {
		start, _ := slices.BinarySearchFunc(items, p.after, func(item T, after string) int {
			if key(item) <= after {
				return -1
			}
			return 1
		})
		items = items[start:]
	}
	if p.limit == 0 || len(items) <= p.limit {
		return items, ""
	}
	return items[:p.limit], key(items[p.limit-1])
}

// writeList answers a page of a list under its name, with next when
// more follow.
func writeList(w http.ResponseWriter, name string, items any, next string) {
	out := map[string]any{name: items}
	if next != "" {
		out["next"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

// namespacedKey orders a list of namespaced things and is its cursor.
func namespacedKey(namespace, name string) string { return namespace + "/" + name }

func objectKey(o *registry.Object) string { return namespacedKey(o.Namespace, o.Name) }
