package remotefile_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

const (
	testUser     = "alice"
	testPassword = "s3cret-Pw"
	source       = `configmap ns-a/game-conf item "server.conf"`
)

func item(url string) proto.RemoteItem {
	typ, _, _ := strings.Cut(url, "://")
	return proto.RemoteItem{Source: source, Type: typ, URL: url, User: testUser, Password: testPassword,
		File: &proto.File{Path: "/etc/game/server.conf"}}
}

// httpServer serves /conf (basic auth alice), /big (more than 1 KiB),
// /slow (never answers before the client gives up) and 404 elsewhere.
func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, ok := r.BasicAuth()
		if !ok || user != testUser || pw != testPassword {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/conf":
			w.Write([]byte("port=8080\n"))
		case "/big":
			w.Write(bytes.Repeat([]byte("x"), 2048))
		case "/slow":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFetchHTTP checks the http type of seed 000's configmap items against
// a real HTTP server: basic auth when a user is given, non-2xx, the size
// limit and the timeout each fail naming the item and the URL, never the
// password.
func TestFetchHTTP(t *testing.T) {
	srv := httpServer(t)
	f := &remotefile.Fetcher{MaxBytes: 1024, Timeout: 300 * time.Millisecond}
	ctx := context.Background()

	got, err := f.Fetch(ctx, item(srv.URL+"/conf"), nil)
	if err != nil || string(got) != "port=8080\n" {
		t.Fatalf("Fetch = %q, %v; want the body", got, err)
	}

	bad := item(srv.URL + "/conf")
	bad.Password = "wrong-Pw"
	tests := []struct {
		name string
		item proto.RemoteItem
		want string
		kind error
	}{
		{"wrong password", bad, "GET " + srv.URL + "/conf: HTTP status 401 Unauthorized", errdefs.ErrUnavailable},
		{"not found", item(srv.URL + "/nope"), "GET " + srv.URL + "/nope: HTTP status 404 Not Found", errdefs.ErrUnavailable},
		{"too big", item(srv.URL + "/big"), srv.URL + "/big: too big: more than 1024 bytes", errdefs.ErrInvalidArgument},
		{"timeout", item(srv.URL + "/slow"), "GET " + srv.URL + "/slow: timed out", errdefs.ErrUnavailable},
		{"type is not the scheme", func() proto.RemoteItem { i := item(srv.URL + "/conf"); i.Type = "ftp"; return i }(),
			"is not of type ftp", errdefs.ErrInvalidArgument},
		{"credentials in the URL", item(strings.Replace(srv.URL, "://", "://alice:"+testPassword+"@", 1) + "/conf"),
			"carries credentials, which go in user and password", errdefs.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Fetch(ctx, tt.item, nil)
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, source+": ") || !strings.Contains(msg, tt.want) || !errors.Is(err, tt.kind) {
				t.Errorf("error %q (%v): want %q after %q, class %v", msg, err, tt.want, source, tt.kind)
			}
			if strings.Contains(msg, testPassword) || strings.Contains(msg, "wrong-Pw") {
				t.Errorf("error %q shows the password", msg)
			}
		})
	}
}

// TestResolve checks that remote items become env and files entries of a
// copy of the spec, with a copy of each in the sandbox directory and no
// password anywhere in it.
func TestResolve(t *testing.T) {
	srv := httpServer(t)
	dir := t.TempDir()
	f := &remotefile.Fetcher{Dir: dir}
	asEnv := item(srv.URL + "/conf")
	asEnv.File, asEnv.Env = nil, "GAME_CONF"
	spec := &proto.TaskSpec{Name: "gamesvr", Env: []proto.EnvVar{{Name: "A", Value: "1"}},
		Remote: []proto.RemoteItem{item(srv.URL + "/conf"), asEnv}}
	got, err := f.Resolve(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Remote) != 0 || len(spec.Remote) != 2 || len(spec.Files) != 0 {
		t.Errorf("Resolve left remote %v, changed the spec given to %+v", got.Remote, spec)
	}
	if len(got.Env) != 2 || got.Env[1] != (proto.EnvVar{Name: "GAME_CONF", Value: "port=8080\n"}) {
		t.Errorf("env = %+v", got.Env)
	}
	if len(got.Files) != 1 || got.Files[0].Path != "/etc/game/server.conf" || string(got.Files[0].Content) != "port=8080\n" {
		t.Errorf("files = %+v", got.Files)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "gamesvr", "*"))
	if len(kept) != 2 {
		t.Fatalf("sandbox holds %v, want the two items", kept)
	}
	for _, p := range kept {
		b, _ := os.ReadFile(p)
		if string(b) != "port=8080\n" {
			t.Errorf("%s holds %q", p, b)
		}
	}
	same, err := f.Resolve(context.Background(), got)
	if err != nil || same != got {
		t.Errorf("resolving a resolved spec = %p, %v; want it unchanged", same, err)
	}
}

// A spec's egress policy holds its items: a loopback server is refused,
// naming the address, the rule and the namespace, and sees no request;
// a redirect from an allowed server to a refused one is refused; the
// namespace's allowed exception lets the same fetch through.
func TestResolveHoldsToTheEgressPolicy(t *testing.T) {
	srv := httpServer(t)
	hop := httptest.NewServer(http.RedirectHandler(srv.URL+"/conf", http.StatusFound))
	t.Cleanup(hop.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	spec := func(url string, allowed ...string) *proto.TaskSpec {
		return &proto.TaskSpec{Name: "gamesvr", Instance: proto.Instance{Namespace: "nsa"},
			Egress: &proto.Egress{Refused: egress.Networks(), Allowed: allowed}, Remote: []proto.RemoteItem{item(url)}}
	}
	f := &remotefile.Fetcher{}
	_, err := f.Resolve(context.Background(), spec(srv.URL+"/conf"))
	want := source + ": GET " + srv.URL + "/conf: egress to " + host + " refused: loopback (egress policy of namespace nsa)"
	if err == nil || err.Error() != want+": permission denied" || !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("Resolve: %v, want %q", err, want)
	}
	_, err = f.Resolve(context.Background(), spec(hop.URL+"/conf", strings.TrimPrefix(hop.URL, "http://")))
	if err == nil || !strings.Contains(err.Error(), "redirect to "+srv.URL+"/conf: egress to "+host+" refused: loopback") {
		t.Errorf("Resolve through a redirect: %v", err)
	}
	got, err := f.Resolve(context.Background(), spec(srv.URL+"/conf", host))
	if err != nil || string(got.Files[0].Content) != "port=8080\n" {
		t.Errorf("allowed: %+v, %v", got, err)
	}
}
