package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/manifest"
	"github.com/bcs-mesos/bcs-mesos/pkg/manifest/manifesttest"
)

// FuzzAPICreate posts arbitrary bodies to POST /v1/apps. Issue 3: an
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
