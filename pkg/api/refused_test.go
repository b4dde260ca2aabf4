package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
)

// recordLog makes the default logger, which the API's request log
// writes to, a text log the test reads, at debug level, until it ends.
func recordLog(t *testing.T) *syncBuffer {
	log := &syncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return log
}

// A write the store refuses on its precondition (a create of an existing
// object, an update after another) tells the client what changed and
// what to do, in the API's terms: the object and its revision as GET
// shows them. The store's key, its op and the transaction's shape go to
// the server's log only ("apply op 1 of 2: create \"apps/…\": exists at
// revision 279" was shown to a user).
func TestRefusedWritesSayWhatChangedNotTheStoresWords(t *testing.T) {
	log := recordLog(t)
	e := newEnv(t)
	var cm api.ObjectView
	e.expect(t, http.StatusCreated, "POST", "/v1/configmaps", configMap("one", "ns-a"), &cm)
	var game api.AppView
	e.expect(t, http.StatusCreated, "POST", "/v1/apps", process("game", "ns-a"), &game)
	e.expect(t, http.StatusCreated, "POST", "/v1/deployments", deployment("fleet", "ns-a"), nil)
	var updated api.ObjectView
	e.expect(t, http.StatusOK, "PUT", "/v1/configmaps/ns-a/one", configMap("one", "ns-a"), &updated)

	for _, c := range []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code, message      string
	}{
		{"a configmap created again", "POST", "/v1/configmaps", configMap("one", "ns-a"), nil, http.StatusConflict, "AlreadyExists",
			"configmap ns-a/one exists already: change it with PUT (bcsctl apply), or delete it first"},
		{"a process created again", "POST", "/v1/apps", process("game", "ns-a"), nil, http.StatusConflict, "AlreadyExists",
			"process ns-a/game exists already: change it with PUT (bcsctl apply), or delete it first"},
		{"a deployment created again", "POST", "/v1/deployments", deployment("fleet", "ns-a"), nil, http.StatusConflict, "AlreadyExists",
			"deployment ns-a/fleet exists already: change it with PUT (bcsctl apply), or delete it first"},
		{"a configmap updated from a stale read", "PUT", "/v1/configmaps/ns-a/one", configMap("one", "ns-a"),
			[]string{"If-Match", fmt.Sprint(cm.Revision)}, http.StatusConflict, "Conflict",
			fmt.Sprintf("configmap ns-a/one changed since revision %d (it is at revision %d now): read it again and retry", cm.Revision, updated.Revision)},
		{"a process updated from a stale read", "PUT", "/v1/apps/ns-a/game", process("game", "ns-a"),
			[]string{"If-Match", fmt.Sprint(game.Revision - 1)}, http.StatusConflict, "Conflict",
			fmt.Sprintf("process ns-a/game changed since revision %d (it is at revision %d now): read it again and retry: conflict", game.Revision-1, game.Revision)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := errorOf(t, e.call(t, c.method, c.path, c.body, c.headers...), c.status, c.code)
			if got.Message != c.message {
				t.Errorf("message %q, want %q", got.Message, c.message)
			}
		})
	}
	// The details are the server's: the log names the store's keys.
	for _, want := range []string{`create \"configmaps/ns-a/one\": exists at revision`, `apply op 1 of 2: create \"apps/ns-a/game\"`,
		fmt.Sprintf(`update \"configmaps/ns-a/one\": expected revision %d, current is %d`, cm.Revision, updated.Revision)} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the server's log does not say %s:\n%s", want, log.String())
		}
	}
}

// A client that goes away before its request is answered (Ctrl-C of
// bcsctl events -w while the stream starts) is the client's business:
// the server logs it at debug level, never as an error.
func TestAClientGoneIsNoError(t *testing.T) {
	log := recordLog(t)
	e := newEnv(t)
	server := api.NewServer(api.Config{Registry: e.reg, Leadership: api.Single{}, Events: api.EventsConfig{Feed: changefeed.New(e.store)}})
	defer server.EndStreams()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/v1/events?lastEventId=1", nil)
	server.ServeHTTP(httptest.NewRecorder(), req)
	if strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "level=DEBUG msg=\"request ended: the client went away\" method=GET path=/v1/events") {
		t.Errorf("the log of a client gone, want one debug line and no error:\n%s", log.String())
	}
}
