package api_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/api"
	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// FuzzAPICreate posts arbitrary bodies to POST /v1/apps. An
// invalid manifest is a 400 with every problem as `field path: message`
// (never a 500 or a panic), and whatever is accepted reads back as a
// manifest that parses and validates again.
func FuzzAPICreate(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "manifest", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("reference files: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, obj := range []manifest.Object{manifesttest.Process(), manifesttest.Application(), process("gamesvc", "ns-b")} {
		data, err := json.Marshal(obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(miniProcess))
	f.Add([]byte(`{"kind":"process","metadata":{"name":"a b"}}`))

	e := newEnv(f)
	handler := e.server.Config.Handler
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/v1/apps", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		r := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
		switch r.status {
		case http.StatusCreated:
			var created struct {
				Namespace, Name string
				Spec            json.RawMessage
			}
			if err := json.Unmarshal(r.body, &created); err != nil {
				t.Fatalf("201 body %s: %v", r.body, err)
			}
			obj, err := manifest.Parse(created.Spec)
			if err != nil {
				t.Fatalf("accepted spec does not parse back: %v\n%s", err, created.Spec)
			}
			if errs := obj.Validate(nil); len(errs) > 0 {
				t.Fatalf("accepted spec does not validate back: %q\n%s", errs.Messages(), created.Spec)
			}
		case http.StatusConflict:
			errorOf(t, r, http.StatusConflict, "AlreadyExists")
		default:
			got := errorOf(t, r, http.StatusBadRequest, "InvalidArgument")
			if len(got.Details) == 0 {
				t.Fatalf("400 without details: %s", r.body)
			}
		}
	})
}

// fuzzRoute is one method and path template of /openapi.json.
type fuzzRoute struct{ method, path string }

// documentedRoutes are every route of the document but the event stream,
// which answers until the client leaves.
func documentedRoutes(t testing.TB, e *env) []fuzzRoute {
	loadDocument(t, e)
	var routes []fuzzRoute
	for _, path := range document.Paths.InMatchingOrder() {
		for method := range document.Paths.Value(path).Operations() {
			if path != "/v1/events" {
				routes = append(routes, fuzzRoute{method, path})
			}
		}
	}
	slices.SortFunc(routes, func(a, b fuzzRoute) int { return cmp.Compare(a.method+" "+a.path, b.method+" "+b.path) })
	return routes
}

// FuzzAPIRoutes sends arbitrary path segments, query strings and bodies
// to every documented route ("every route fuzzed"), as an
// authenticated caller, so that each route works out its scope from the
// request as it does in production. Whatever comes in, the answer is
// never a 5xx and never a panic, and it is what /openapi.json says the
// route answers (the one error shape for errors). The seeds send every
// route bodies of many kinds: each route's own and the others'.
func FuzzAPIRoutes(f *testing.F) {
	users, err := auth.ParseTokens(strings.NewReader(tokenFile))
	if err != nil {
		f.Fatal(err)
	}
	// An operator and a planner that answer at once: the routes that reach
	// the scheduler answer as with one.
	e := newEnv(f, func(c *api.Config) {
		c.Operator, c.Planner = &fakeOperator{}, &recordingPlanner{}
		c.Auth = &api.AuthConfig{Authenticator: &auth.Authenticator{Tokens: users}}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	routes := documentedRoutes(f, e)
	seedBodies := [][]byte{nil, []byte("{}"), []byte(miniProcess), []byte(`{"instances":2}`), []byte(`[`), []byte(`{"a":` + strings.Repeat("[", 200))}
	for _, obj := range []manifest.Object{manifesttest.Process(), manifesttest.ConfigMap(), manifesttest.Secret(),
		manifesttest.Command(), manifesttest.Deployment(), manifesttest.HookTemplate()} {
		data, err := json.Marshal(obj)
		if err != nil {
			f.Fatal(err)
		}
		seedBodies = append(seedBodies, data)
	}
	for i := range routes {
		for _, body := range seedBodies {
			f.Add(uint16(i), "ns-a", "gamesvc", "", body)
		}
		f.Add(uint16(i), "../..", "a%2Fb", "namespace=ns-a&limit=0&after=%00&force=maybe", []byte(nil))
	}
	handler := e.server.Config.Handler
	f.Fuzz(func(t *testing.T, route uint16, first, second, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		segments := []string{first, second}
		path := pathParam.ReplaceAllStringFunc(r.path, func(string) string {
			s := segments[0]
			segments = append(segments[1:], s)
			return url.PathEscape(s)
		})
		target := path
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil || strings.ContainsFunc(u.RequestURI(), func(c rune) bool { return c <= ' ' || c == 0x7f }) || u.Query().Has("follow") {
			return // not a request line a client can send; follow streams
		}
		req := httptest.NewRequest(r.method, u.RequestURI(), bytes.NewReader(body))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		defer cancel()
		req = req.WithContext(ctx)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s answered %d: %s", r.method, u.RequestURI(), rec.Code, truncate(rec.Body.Bytes()))
		}
		if _, _, err := router.FindRoute(req); err != nil {
			// No template matches (a dot segment, an escaped slash): the
			// mux's own answer, still in the one error shape.
			var got struct{ Error apiError }
			if rec.Code < 400 || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.Error.Code == "" {
				t.Fatalf("%s %s, which no route takes, answered %d: %s", r.method, u.RequestURI(), rec.Code, truncate(rec.Body.Bytes()))
			}
			return
		}
		conform(t, e, req, rec.Code, rec.Header(), rec.Body.Bytes())
	})
}

// pathParam is a {name} of a path template.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)
