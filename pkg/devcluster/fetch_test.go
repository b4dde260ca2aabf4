package devcluster

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func boolp(b bool) *bool { return &b }

// CommandInfo.URI semantics (mesos.proto): file:// and http(s):// are
// fetched into the sandbox, executable sets the run bit, extract (default
// true) unpacks tar.gz/tgz/zip, output_file renames.
func TestFetchURIs(t *testing.T) {
	src := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := write("run.sh", []byte("#!/bin/sh\necho hi\n"))
	tgz := write("bundle.tgz", tarGz(t, map[string]string{"bundle/bin/server": "binary", "bundle/conf.ini": "x=1"}))
	kept := write("kept.tar.gz", tarGz(t, map[string]string{"inner": "no"}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/assets.zip":
			_, _ = w.Write(zipOf(t, map[string]string{"assets/map.dat": "map"}))
		case "/plain.txt":
			_, _ = w.Write([]byte("plain"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	sandbox := t.TempDir()
	uris := []mesos.CommandInfo_URI{
		{Value: "file://" + script, Executable: boolp(true)},
		{Value: "file://" + tgz},
		{Value: kept, Extract: boolp(false)},
		{Value: srv.URL + "/assets.zip"},
		{Value: srv.URL + "/plain.txt", OutputFile: strPtr("renamed.txt")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fetchURIs(ctx, uris, sandbox); err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{
		"run.sh":            "#!/bin/sh\necho hi\n",
		"bundle/bin/server": "binary",
		"bundle/conf.ini":   "x=1",
		"assets/map.dat":    "map",
		"renamed.txt":       "plain",
		"assets.zip":        "",
		"kept.tar.gz":       "",
		"bundle.tgz":        "",
	}
	for name, want := range checks {
		b, err := os.ReadFile(filepath.Join(sandbox, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want != "" && string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(sandbox, "inner")); !os.IsNotExist(err) {
		t.Errorf("extract=false archive was extracted: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(sandbox, "run.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("run.sh mode %v (%v), want executable", fi.Mode(), err)
	}

	if err := fetchURIs(ctx, []mesos.CommandInfo_URI{{Value: srv.URL + "/missing"}}, sandbox); err == nil {
		t.Error("HTTP 404 fetched without error")
	}
	evil := write("evil.tgz", tarGz(t, map[string]string{"../escape": "x"}))
	if err := fetchURIs(ctx, []mesos.CommandInfo_URI{{Value: evil}}, sandbox); err == nil {
		t.Error("archive escaping the sandbox was extracted")
	}
}

// Mesos prints durations in its own syntax ("5secs"); mesos-go's
// executor config parses exactly that.
func TestMesosDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Second:         "5secs",
		1500 * time.Millisecond: "1.5secs",
		15 * time.Minute:        "15mins",
		250 * time.Millisecond:  "250ms",
		2 * time.Hour:           "2hrs",
		36 * time.Hour:          "1.5days",
		0:                       "0ns",
	} {
		if got := mesosDuration(d); got != want {
			t.Errorf("mesosDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// Bytes are printed like Mesos' Bytes operator<< in validation messages.
func TestFormatMegabytes(t *testing.T) {
	for mb, want := range map[float64]string{16: "16MB", 32: "32MB", 1.5: "1536KB", 1024: "1GB", 0: "0B"} {
		if got := formatMegabytes(mb); got != want {
			t.Errorf("formatMegabytes(%v) = %q, want %q", mb, got, want)
		}
	}
}

// Accept-header negotiation of the event stream format.
func TestNegotiateStream(t *testing.T) {
	tests := []struct {
		accept, messageAccept string
		contentType, message  string
		code                  int
	}{
		{"", "", mediaJSON, mediaJSON, 0},
		{"application/json", "", mediaJSON, mediaJSON, 0},
		{"application/x-protobuf", "", mediaProtobuf, mediaProtobuf, 0},
		{"*/*", "", mediaJSON, mediaJSON, 0},
		{"application/recordio", "application/x-protobuf", mediaRecordIO, mediaProtobuf, 0},
		{"application/recordio", "", mediaRecordIO, mediaJSON, 0},
		{"text/html", "", "", "", http.StatusNotAcceptable},
		{"application/recordio", "text/html", "", "", http.StatusNotAcceptable},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/scheduler", nil)
		r.Header.Set("Accept", tc.accept)
		r.Header.Set("Message-Accept", tc.messageAccept)
		f, herr := negotiateStream(r)
		if tc.code != 0 {
			if herr == nil || herr.code != tc.code {
				t.Errorf("Accept %q / %q: got %v, want %d", tc.accept, tc.messageAccept, herr, tc.code)
			}
			continue
		}
		if herr != nil || f.contentType != tc.contentType || f.message.mediaType != tc.message {
			t.Errorf("Accept %q / %q: got %+v %v", tc.accept, tc.messageAccept, f, herr)
		}
	}
}
