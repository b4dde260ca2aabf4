package vaulttest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"testing"

	"github.com/bcs-mesos/bcs-mesos/pkg/vaulttest"
)

// The documented shapes of Vault's KV version 2 API (Vault 1.x,
// developer.hashicorp.com/vault/api-docs/secret/kv/kv-v2): the sample
// responses of "Create/Update secret", "Read secret version" and "Read
// secret metadata", with values of our own. custom_metadata is null: what
// Vault returns for a secret that has none.
const (
	documentedWrite = `{"data": {"created_time": "2018-03-22T02:24:06.945319214Z", "custom_metadata": null,
		"deletion_time": "", "destroyed": false, "version": 1}}`
	documentedRead = `{"data": {"data": {"foo": "bar"}, "metadata": {"created_time": "2018-03-22T02:24:06.945319214Z",
		"custom_metadata": null, "deletion_time": "", "destroyed": false, "version": 2}}}`
	documentedMetadata = `{"data": {"cas_required": false, "created_time": "2018-03-22T02:24:06.945319214Z",
		"current_version": 3, "delete_version_after": "3h25m19s", "max_versions": 0, "oldest_version": 0,
		"updated_time": "2018-03-22T02:36:43.986212308Z", "custom_metadata": null,
		"versions": {"1": {"created_time": "2018-03-22T02:24:06.945319214Z", "deletion_time": "", "destroyed": false}}}}`
	// A soft-deleted version reads as 404 with its metadata and null data.
	documentedDeletedRead = `{"data": {"data": null, "metadata": {"created_time": "2018-03-22T02:24:06.945319214Z",
		"custom_metadata": null, "deletion_time": "2018-03-22T02:30:06.945319214Z", "destroyed": false, "version": 1}}}`
	documentedNotFound = `{"errors": []}`
	documentedDenied   = `{"errors": ["permission denied"]}`
)

// shape lists the paths of a JSON document with the kind of each value,
// ignoring the values themselves; "data" (a secret's own keys) below
// data.data is not descended into, the documented keys being examples.
func shape(t *testing.T, doc []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			out = append(out, path+":object")
			if path == ".data.data" || path == ".data.versions" {
				return
			}
			for k, e := range v {
				walk(path+"."+k, e)
			}
		case []any:
			out = append(out, fmt.Sprintf("%s:array[%d]", path, len(v)))
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case nil:
			out = append(out, path+":null")
		default:
			out = append(out, fmt.Sprintf("%s:%T", path, v))
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}

// envelopeOnly drops the envelope fields a response carries besides data
// (request_id, lease_id, …), which the documented samples leave out.
func envelopeOnly(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for _, k := range []string{"request_id", "lease_id", "renewable", "lease_duration", "wrap_info", "warnings", "auth", "mount_type"} {
		if _, ok := m[k]; !ok && m["data"] != nil {
			t.Errorf("response lacks the envelope field %q: %s", k, body)
		}
		delete(m, k)
	}
	out, _ := json.Marshal(m)
	return out
}

func do(t *testing.T, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, url, r)
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// TestShapesMatchTheDocumentedAPI checks each answer of the in-test server
// against the documented sample: status code and JSON shape.
func TestShapesMatchTheDocumentedAPI(t *testing.T) {
	srv, err := vaulttest.Start("root-token", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	data := srv.URL + "/v1/secret/data/bcs/ns/db"
	meta := srv.URL + "/v1/secret/metadata/bcs/ns/db"
	check := func(what string, gotCode int, got []byte, wantCode int, documented string) {
		t.Helper()
		if gotCode != wantCode {
			t.Errorf("%s: status %d, documented %d: %s", what, gotCode, wantCode, got)
		}
		if g, w := shape(t, envelopeOnly(t, got)), shape(t, []byte(documented)); !slices.Equal(g, w) {
			t.Errorf("%s: shape\n%v\ndocumented\n%v", what, g, w)
		}
	}

	code, body := do(t, "GET", data, "root-token", nil)
	check("read of a path never written", code, body, 404, documentedNotFound)
	code, body = do(t, "POST", data, "wrong", map[string]any{"data": map[string]any{"foo": "bar"}})
	check("write with a wrong token", code, body, 403, documentedDenied)
	code, body = do(t, "GET", data, "", nil)
	check("read without a token", code, body, 403, documentedDenied)

	code, body = do(t, "POST", data, "root-token", map[string]any{"options": map[string]any{"cas": 0}, "data": map[string]any{"foo": "bar"}})
	check("first write", code, body, 200, documentedWrite)
	code, body = do(t, "POST", data, "root-token", map[string]any{"data": map[string]any{"foo": "baz"}})
	check("second write", code, body, 200, documentedWrite)
	var written struct {
		Data struct{ Version int } `json:"data"`
	}
	_ = json.Unmarshal(body, &written)
	if written.Data.Version != 2 {
		t.Errorf("second write: version %d, want 2", written.Data.Version)
	}
	code, body = do(t, "POST", data, "root-token", map[string]any{"options": map[string]any{"cas": 1}, "data": map[string]any{"foo": "x"}})
	if code != 400 {
		t.Errorf("write with a stale cas: %d %s, want 400", code, body)
	}

	code, body = do(t, "GET", data, "root-token", nil)
	check("read of the current version", code, body, 200, documentedRead)
	var read struct {
		Data struct {
			Data     map[string]string `json:"data"`
			Metadata struct{ Version int }
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &read)
	if read.Data.Data["foo"] != "baz" || read.Data.Metadata.Version != 2 {
		t.Errorf("current version: %s", body)
	}
	code, body = do(t, "GET", data+"?version=1", "root-token", nil)
	check("read of version 1", code, body, 200, documentedRead)
	if _ = json.Unmarshal(body, &read); read.Data.Data["foo"] != "bar" || read.Data.Metadata.Version != 1 {
		t.Errorf("version 1: %s", body)
	}
	code, body = do(t, "GET", data+"?version=7", "root-token", nil)
	check("read of a version never written", code, body, 404, documentedNotFound)
	code, body = do(t, "GET", meta, "root-token", nil)
	check("metadata", code, body, 200, documentedMetadata)

	// DELETE of data soft-deletes the current version (204); reading it
	// answers 404 with its metadata; the version before stays readable.
	if code, body = do(t, "DELETE", data, "root-token", nil); code != 204 || len(body) != 0 {
		t.Errorf("delete latest version: %d %s, documented 204 and no body", code, body)
	}
	code, body = do(t, "GET", data+"?version=2", "root-token", nil)
	check("read of a soft-deleted version", code, body, 404, documentedDeletedRead)
	if code, _ = do(t, "GET", data+"?version=1", "root-token", nil); code != 200 {
		t.Errorf("version 1 after version 2 was deleted: %d", code)
	}

	// DELETE of metadata removes every version (204).
	if code, body = do(t, "DELETE", meta, "root-token", nil); code != 204 || len(body) != 0 {
		t.Errorf("delete metadata: %d %s, documented 204 and no body", code, body)
	}
	code, body = do(t, "GET", data+"?version=1", "root-token", nil)
	check("read after the metadata was deleted", code, body, 404, documentedNotFound)
	code, body = do(t, "GET", meta, "root-token", nil)
	check("metadata after it was deleted", code, body, 404, documentedNotFound)
}
