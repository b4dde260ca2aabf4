package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/changefeed"
	"github.com/bcs-mesos/bcs-mesos/pkg/readview"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
	"github.com/bcs-mesos/bcs-mesos/pkg/store/storetest"
)

// One embedded etcd serves the whole test binary; every test gets its own
// key prefix (store.Config.Prefix), so tests never see each other's keys.
var shared storetest.Shared

func TestMain(m *testing.M) { os.Exit(storetest.RunShared(m, &shared)) }

// etcdReads runs the tests with the API reading etcd only; by default it
// reads from a read view, as bcs-scheduler's does, so every test of a
// read shows the view answers what etcd would.
var etcdReads = flag.Bool("etcd-reads", false, "serve the API's reads from etcd, not from a read view")

// env is one API server over a private prefix of an etcd.
type env struct {
	url       string
	endpoints []string
	prefix    string
	store     *store.Store
	reg       *registry.Registry
	server    *httptest.Server
	stopView  func() // nil: no read view
	client    *http.Client
}

// newEnv serves the API over a fresh prefix of the shared etcd; change
// adjusts the server's Config.
func newEnv(t testing.TB, change ...func(*api.Config)) *env {
	t.Helper()
	return newEnvOn(t, shared.Etcd.Endpoints(), shared.Prefix("api-test"), shared.Sealer, change...)
}

func newEnvOn(t testing.TB, endpoints []string, prefix string, sealer *store.Sealer, change ...func(*api.Config)) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Config{Endpoints: endpoints, Prefix: prefix, Sealer: sealer, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	reg := registry.New(st, time.Now)
	cfg := api.Config{
		Registry:   reg,
		Leadership: api.Single{URL: "http://leader.invalid"},
		Healthy:    st.Ping,
		Events:     api.EventsConfig{Feed: changefeed.New(st)},
	}
	var stopView func()
	if !*etcdReads {
		cfg.View, stopView = startView(t, st)
		cfg.ViewWait = 5 * time.Second // a slow test machine must not fall back to etcd unseen
	}
	for _, f := range change {
		f(&cfg)
	}
	srv := httptest.NewServer(api.NewServer(cfg))
	e := &env{
		url: srv.URL, endpoints: endpoints, prefix: prefix, store: st, reg: reg, server: srv, stopView: stopView,
		client: &http.Client{
			Timeout:       10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	t.Cleanup(e.close)
	return e
}

// startView runs a read view of st until stop.
func startView(t testing.TB, st *store.Store) (_ *registry.Viewed, stop func()) {
	t.Helper()
	view, err := readview.New(st, registry.ViewConfig(readview.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = view.Run(ctx) }()
	return registry.NewViewed(view), func() { cancel(); <-done }
}

// close stops the HTTP server and the store client; calling it twice is
// harmless.
func (e *env) close() {
	e.server.Close()
	if e.stopView != nil {
		e.stopView()
	}
	e.store.Close()
}

// response is what one request got back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends body (a string or []byte is sent as is, anything else as
// JSON) with Content-Type application/json unless headers, name-value
// pairs, say otherwise.
func (e *env) call(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = bytes.NewReader([]byte(b))
	case []byte:
		reader = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.url+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	conform(t, e, req, resp.StatusCode, resp.Header, data)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// expect calls and fails the test unless the status is want; it decodes a
// JSON answer into out when out is not nil.
func (e *env) expect(t *testing.T, want int, method, path string, body any, out any) response {
	t.Helper()
	r := e.call(t, method, path, body)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, r.body, err)
		}
	}
	return r
}

// apiError is the API's one error shape.
type apiError struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}

// errorOf checks that r is an error with status and code in exactly the
// shape {"error":{"code","message","details"}} ("Errors: one JSON shape")
// and returns it.
func errorOf(t *testing.T, r response, status int, code string) apiError {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &outer); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if keys := sortedKeys(outer); !reflect.DeepEqual(keys, []string{"error"}) {
		t.Fatalf("error body keys = %q, want [error]; body %s", keys, r.body)
	}
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(outer["error"], &inner); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if keys := sortedKeys(inner); !reflect.DeepEqual(keys, []string{"code", "details", "message"}) {
		t.Fatalf("error keys = %q, want [code details message]; body %s", keys, r.body)
	}
	var got apiError
	if err := json.Unmarshal(outer["error"], &got); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if got.Details == nil {
		t.Errorf("details is null, want a list; body %s", r.body)
	}
	if got.Code != code {
		t.Errorf("error code = %q, want %q; body %s", got.Code, code, r.body)
	}
	if got.Message == "" {
		t.Errorf("error message is empty; body %s", r.body)
	}
	return got
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// storedKeys lists every key under the env's prefix.
func (e *env) storedKeys(t *testing.T) []string {
	t.Helper()
	entries, err := e.store.List(context.Background(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	keys := make([]string, len(entries))
	for i, en := range entries {
		keys[i] = en.Key
	}
	return keys
}
