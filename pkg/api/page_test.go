package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// pagedNames walks a list route page by page with ?limit= and ?after=,
// returning the names in the order served and how many pages it took.
func pagedNames(t *testing.T, e *env, path, key string, limit int) (names []string, pages int) {
	t.Helper()
	after := ""
	for {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if after != "" {
			q.Set("after", after)
		}
		sep := "?"
		if u, _ := url.Parse(path); u.RawQuery != "" {
			sep = "&"
		}
		var page map[string]any
		e.expect(t, http.StatusOK, "GET", path+sep+q.Encode(), nil, &page)
		pages++
		items, _ := page[key].([]any)
		if len(items) > limit {
			t.Fatalf("GET %s: %d items on a page of %d", path, len(items), limit)
		}
		for _, item := range items {
			m := item.(map[string]any)
			names = append(names, fmt.Sprintf("%v/%v", m["namespace"], m["name"]))
		}
		next, _ := page["next"].(string)
		if next == "" {
			return names, pages
		}
		if len(items) != limit {
			t.Fatalf("GET %s: a page of %d before the last has %d", path, limit, len(items))
		}
		after = next
	}
}

// "list responses paginated". Walking a list two by two gives
// every item once, in one order, the same as the whole list; a page
// starts after a cursor even when that item has gone meanwhile.
func TestListsArePaged(t *testing.T) {
	e := newEnv(t)
	var want []string
	for _, ns := range []string{"ns-b", "ns-a"} {
		for _, name := range []string{"zeta", "alpha", "mid"} {
			e.expect(t, http.StatusCreated, "POST", "/v1/apps", process(name, ns), nil)
			e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap(name, ns), nil)
			want = append(want, ns+"/"+name)
		}
	}
	slices.Sort(want)
	for _, route := range []struct{ path, key string }{{"/v1/apps", "apps"}, {"/v1/configmaps", "configmaps"}} {
		var whole map[string][]map[string]any
		e.expect(t, http.StatusOK, "GET", route.path, nil, &whole)
		if n := len(whole[route.key]); n != len(want) {
			t.Fatalf("GET %s without limit: %d items, want all %d", route.path, n, len(want))
		}
		got, pages := pagedNames(t, e, route.path, route.key, 2)
		if !slices.Equal(got, want) || pages != 3 {
			t.Errorf("GET %s two by two: %q in %d pages, want %q in 3", route.path, got, pages, want)
		}
		got, _ = pagedNames(t, e, route.path+"?namespace=ns-b", route.key, 2)
		if !slices.Equal(got, want[3:]) {
			t.Errorf("GET %s?namespace=ns-b two by two: %q, want %q", route.path, got, want[3:])
		}
	}

	var page struct {
		Apps []map[string]any `json:"apps"`
		Next string           `json:"next"`
	}
	e.expect(t, http.StatusOK, "GET", "/v1/apps?limit=2", nil, &page)
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/apps/ns-a/mid?force=true", nil, nil)
	e.expect(t, http.StatusOK, "GET", "/v1/apps?limit=2&after="+url.QueryEscape(page.Next), nil, &page)
	if len(page.Apps) == 0 || page.Apps[0]["name"] != "zeta" || page.Apps[0]["namespace"] != "ns-a" {
		t.Errorf("the page after the deleted ns-a/mid starts with %v, want ns-a/zeta", page.Apps)
	}

	for _, limit := range []string{"0", "1001", "x", "-1"} {
		got := errorOf(t, e.call(t, "GET", "/v1/apps?limit="+limit, nil), http.StatusBadRequest, "InvalidArgument")
		if want := "limit: want 1 to 1000, got \"" + limit + "\""; got.Message != "invalid query parameters" || !slices.Equal(got.Details, []string{want}) {
			t.Errorf("?limit=%s: %q %q, want invalid query parameters, %q", limit, got.Message, got.Details, want)
		}
	}
}
