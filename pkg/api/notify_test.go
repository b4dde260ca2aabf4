package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
)

type notifyView struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// Seed 002's Notify Api: register (query or JSON body with an
// event filter), list, delete callbacks; URLs shown redacted; bad input a
// 400 naming the field, changing nothing.
func TestNotifies(t *testing.T) {
	e := newEnv(t)
	const secretURL = "https://bot:hunter2@hooks.example/bcs?token=s3cr3t"
	var added notifyView
	r := e.expect(t, http.StatusAccepted, "POST", "/v1/notifies?callback="+url.QueryEscape(secretURL), nil, &added)
	if added.URL != "https://redacted@hooks.example/bcs?token=redacted" || added.ID == "" || len(added.Events) != 0 {
		t.Errorf("added %+v", added)
	}
	var filtered notifyView
	e.expect(t, http.StatusAccepted, "POST", "/v1/notifies",
		map[string]any{"callback": "http://10.0.0.9:9000/alerts", "events": []string{"flapping", "missing", "flapping"}}, &filtered)
	if strings.Join(filtered.Events, ",") != "flapping,missing" {
		t.Errorf("events %v, want flapping,missing", filtered.Events)
	}

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"no callback", "POST", "/v1/notifies?callback=", nil, 400, "callback: required"},
		{"not http", "POST", "/v1/notifies?callback=" + url.QueryEscape("ftp://u:hunter2@h/x"), nil, 400, `callback: "ftp://redacted@h/x": want an http or https URL`},
		{"unknown event", "POST", "/v1/notifies", map[string]any{"callback": "http://h/x", "events": []string{"exit", "oom"}}, 400, `events[1]: "oom" is not one of exit, missing, noIP, flapping`},
		{"query and body", "POST", "/v1/notifies?callback=http://h/x", map[string]any{"callback": "http://h/y"}, 400, "callback: give it in the query or in a JSON body, not both"},
		{"delete without callback", "DELETE", "/v1/notifies", nil, 400, "callback: required"},
		{"delete unknown", "DELETE", "/v1/notifies?callback=http://h/unknown", nil, 404, "notify callback http://h/unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := map[int]string{400: "InvalidArgument", 404: "NotFound"}[tc.status]
			got := errorOf(t, e.call(t, tc.method, tc.path, tc.body), tc.status, code)
			if !strings.Contains(got.Message, tc.want) || strings.Contains(got.Message, "hunter2") {
				t.Errorf("message %q, want %q (and no credentials)", got.Message, tc.want)
			}
		})
	}

	var list struct{ Notifies []notifyView }
	r = e.expect(t, http.StatusOK, "GET", "/v1/notifies", nil, &list)
	if len(list.Notifies) != 2 || strings.Contains(string(r.body), "hunter2") || strings.Contains(string(r.body), "s3cr3t") {
		t.Fatalf("GET /v1/notifies: %s; want the two callbacks, redacted", r.body)
	}
	var deleted notifyView
	e.expect(t, http.StatusAccepted, "DELETE", "/v1/notifies?callback="+url.QueryEscape(secretURL), nil, &deleted)
	if deleted.ID != added.ID || deleted.URL != added.URL {
		t.Errorf("deleted %+v, want %+v", deleted, added)
	}
	e.expect(t, http.StatusOK, "GET", "/v1/notifies", nil, &list)
	if len(list.Notifies) != 1 || list.Notifies[0].ID != filtered.ID {
		t.Errorf("after delete: %+v", list.Notifies)
	}
	errorOf(t, e.call(t, "DELETE", "/v1/notifies?callback="+url.QueryEscape(secretURL), nil), http.StatusNotFound, "NotFound")
}

// The delivery log: newest first, filtered by namespace, app, type and
// state, in pages.
func TestNotificationLog(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	var ids []string
	for i, n := range []struct {
		app string
		t   registry.NoticeType
	}{{"game", registry.NoticeExit}, {"game", registry.NoticeFlapping}, {"web", registry.NoticeMissing}, {"game", registry.NoticeExit}} {
		tgID := fmt.Sprintf("ns-a_%s_0_%d", n.app, i+1)
		notice := registry.Notice{ID: registry.NoticeID(at.Add(time.Duration(i)*time.Second), tgID, n.t), Type: n.t,
			Namespace: "ns-a", App: n.app, TaskGroupID: tgID, Time: at.Add(time.Duration(i) * time.Second)}
		if err := e.reg.PutTaskGroup(context.Background(), &registry.TaskGroup{ID: tgID, Namespace: "ns-a", App: n.app}, notice); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, notice.ID)
	}
	// The notifier delivered the first one to its one callback.
	if _, err := e.reg.ModifyNotification(context.Background(), ids[0], func(n *registry.Notification) bool {
		n.Addressed = true
		n.Deliveries = []registry.Delivery{{Callback: "cb", URL: "http://h/x", State: registry.DeliveryDelivered, Attempts: 1, LastStatus: 200}}
		return true
	}); err != nil {
		t.Fatal(err)
	}

	type page struct {
		Notifications []struct {
			ID         string
			State      string
			Deliveries []registry.Delivery
		}
		Next string
	}
	listed := func(path string) (got []string, next string) {
		var p page
		e.expect(t, http.StatusOK, "GET", path, nil, &p)
		for _, n := range p.Notifications {
			got = append(got, n.ID+":"+n.State)
		}
		return got, p.Next
	}
	state := func(i int, s string) string { return ids[i] + ":" + s }
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{state(3, "pending"), state(2, "pending"), state(1, "pending"), state(0, "delivered")}},
		{"?app=game&type=exit", []string{state(3, "pending"), state(0, "delivered")}},
		{"?state=delivered", []string{state(0, "delivered")}},
		{"?namespace=ns-b", nil},
		{"?before=" + ids[2], []string{state(1, "pending"), state(0, "delivered")}},
	} {
		if got, _ := listed("/v1/notifications" + tc.query); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("GET /v1/notifications%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	first, next := listed("/v1/notifications?limit=3")
	rest, last := listed("/v1/notifications?limit=3&before=" + next)
	if len(first) != 3 || next != ids[1] || len(rest) != 1 || rest[0] != state(0, "delivered") || last != "" {
		t.Errorf("pages %v (next %q), %v (next %q)", first, next, rest, last)
	}

	var one struct {
		ID         string
		Type       string
		State      string
		Deliveries []registry.Delivery
	}
	e.expect(t, http.StatusOK, "GET", "/v1/notifications/"+ids[0], nil, &one)
	if one.ID != ids[0] || one.Type != "exit" || one.State != "delivered" || len(one.Deliveries) != 1 || one.Deliveries[0].LastStatus != 200 {
		t.Errorf("GET one: %+v", one)
	}
	errorOf(t, e.call(t, "GET", "/v1/notifications/20261122T080000.000000000Z-nope-exit", nil), http.StatusNotFound, "NotFound")
	for query, want := range map[string]string{
		"?limit=0":     "limit: want 1 to 1000",
		"?type=oom":    `type: "oom" is not one of exit, missing, noIP, flapping`,
		"?state=gone":  `state: "gone" is not one of pending, delivered, failed`,
		"?limit=many":  "limit: want 1 to 1000",
		"?limit=10000": "limit: want 1 to 1000",
	} {
		if got := errorOf(t, e.call(t, "GET", "/v1/notifications"+query, nil), http.StatusBadRequest, "InvalidArgument"); !strings.Contains(got.Message+"; "+strings.Join(got.Details, "; "), want) {
			t.Errorf("%s: %q %q, want %q", query, got.Message, got.Details, want)
		}
	}
}
