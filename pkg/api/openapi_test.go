package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The API's document, read once from a server: every exchange of every
// test in this package is checked against it (env.call), so a handler
// that answers what the document does not say fails the test that saw it.
var (
	documentOnce sync.Once
	document     *openapi3.T
	documentErr  error
	router       routers.Router
)

func loadDocument(t testing.TB, e *env) {
	t.Helper()
	documentOnce.Do(func() {
		resp, err := e.client.Get(e.url + "/openapi.json")
		if err != nil {
			documentErr = err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			documentErr = err
			return
		}
		if document, documentErr = openapi3.NewLoader().LoadFromData(data); documentErr != nil {
			return
		}
		if documentErr = document.Validate(context.Background()); documentErr != nil {
			return
		}
		router, documentErr = legacy.NewRouter(document)
	})
	if documentErr != nil {
		t.Fatalf("GET /openapi.json: %v", documentErr)
	}
}

// conform fails t unless the answer to req is what the document says the
// route answers: a documented status for a success, and a body of its
// schema (the error shape for an error). A request no route takes (a 404
// or 405 of the mux itself) is not the document's.
func conform(t testing.TB, e *env, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	loadDocument(t, e)
	route, params, err := router.FindRoute(req)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return
		}
		t.Fatalf("%s %s answered %d but is not in /openapi.json: %v", req.Method, req.URL.Path, status, err)
	}
	if status < 300 && route.Operation.Responses.Status(status) == nil {
		t.Fatalf("%s %s answered %d, which /openapi.json does not list for %s", req.Method, req.URL.Path, status, route.Path)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status, Header: header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s answered %d with what /openapi.json does not describe: %v\nbody: %s", req.Method, req.URL.Path, status, err, truncate(body))
	}
}

func truncate(b []byte) []byte {
	if len(b) > 2000 {
		return append(bytes.Clone(b[:2000]), "…"...)
	}
	return b
}

// TestOpenAPIDocument: the document is valid OpenAPI 3 and lists every
// route with its query parameters; the routes' own tests check the
// answers (conform).
func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	loadDocument(t, e)
	for _, c := range []struct {
		method, path string
		params       []string
		status       int
	}{
		{"POST", "/v1/apps", []string{"dryRun"}, http.StatusCreated},
		{"PUT", "/v1/deployments/{ns}/{name}", []string{"dryRun"}, http.StatusOK},
		{"POST", "/v1/plan", nil, http.StatusOK},
		{"GET", "/v1/apps", []string{"namespace"}, http.StatusOK},
		{"DELETE", "/v1/deployments/{ns}/{name}", []string{"force"}, http.StatusAccepted},
		{"POST", "/v1/apps/{ns}/{name}/rollback", nil, http.StatusAccepted},
		{"POST", "/v1/agents/{agent}/cordon", nil, http.StatusOK},
		{"PUT", "/v1/agents/{agent}/taints", nil, http.StatusOK},
		{"GET", "/v1/notifications", []string{"namespace", "app", "type", "state", "limit", "before"}, http.StatusOK},
		{"GET", "/v1/events", []string{"type", "namespace", "lastEventId"}, http.StatusOK},
		{"POST", "/v1/autoscalers", []string{"dryRun"}, http.StatusCreated},
		{"GET", "/v1/autoscalers", []string{"namespace", "limit", "after"}, http.StatusOK},
		{"GET", "/v1/autoscalers/{ns}/{name}", nil, http.StatusOK},
		{"PUT", "/v1/autoscalers/{ns}/{name}", []string{"dryRun"}, http.StatusOK},
		{"DELETE", "/v1/autoscalers/{ns}/{name}", nil, http.StatusNoContent},
		{"POST", "/v1/autoscalers/{ns}/{name}/pause", nil, http.StatusOK},
		{"POST", "/v1/autoscalers/{ns}/{name}/resume", nil, http.StatusOK},
		{"POST", "/v1/apps/{ns}/{name}/instances/{id}/allocate", nil, http.StatusOK},
		{"POST", "/v1/deployments/{ns}/{name}/instances/{id}/release", nil, http.StatusOK},
		{"GET", "/openapi.json", nil, http.StatusOK},
	} {
		item := document.Paths.Value(c.path)
		if item == nil || item.GetOperation(c.method) == nil {
			t.Errorf("%s %s is not in the document", c.method, c.path)
			continue
		}
		op := item.GetOperation(c.method)
		for _, p := range c.params {
			if op.Parameters.GetByInAndName("query", p) == nil {
				t.Errorf("%s %s: query parameter %s not listed", c.method, c.path, p)
			}
		}
		if op.Responses.Status(c.status) == nil {
			t.Errorf("%s %s: status %d not listed", c.method, c.path, c.status)
		}
		if op.Summary == "" {
			t.Errorf("%s %s has no summary", c.method, c.path)
		}
	}
	// The stream's event types are listed, each kind the stream sends.
	if events := document.Paths.Value("/v1/events").Get.Summary; !strings.Contains(events, "allocation") || !strings.Contains(events, "autoscalerstatus") {
		t.Errorf("GET /v1/events: %q; want its event types listed", events)
	}
	if document.Paths.Value("/v1/apps/{ns}/{name}/{op}") != nil {
		t.Errorf("operations are listed by name, not as {op}")
	}
	if got := document.Paths.Len(); got < 50 {
		t.Errorf("%d paths, want every route (more than 50)", got)
	}
	t.Logf("%d paths, %s schemas", document.Paths.Len(), strconv.Itoa(len(document.Components.Schemas)))
}
