package vaulttest

import (
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a KV v2 engine mounted at each of its mounts. It keeps every
// version of every secret in memory.
type Server struct {
	URL string // http://127.0.0.1:port

	mu       sync.Mutex
	token    string
	mounts   map[string]map[string]*secret // mount → path → secret
	requests int
	srv      *http.Server
	now      func() time.Time
}

// secret is one KV v2 path: its versions (from 1) and metadata.
type secret struct {
	versions       map[int]*version
	current        int
	created        time.Time
	updated        time.Time
	customMetadata map[string]string
}

type version struct {
	data      map[string]any // nil once destroyed
	created   time.Time
	deleted   time.Time // soft delete; zero when readable
	destroyed bool
}

// Start serves KV v2 engines at mounts (e.g. "secret"), accepting only
// token. Close stops it.
func Start(token string, mounts ...string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + l.Addr().String(), token: token, mounts: map[string]map[string]*secret{},
		now: func() time.Time { return time.Now().UTC() }}
	for _, m := range mounts {
		s.mounts[m] = map[string]*secret{}
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server: its address refuses connections until Restart.
func (s *Server) Close() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	_ = srv.Close()
}

// Restart serves again at the same address, with the secrets it held, as
// a Vault back from an outage.
func (s *Server) Restart() error {
	l, err := net.Listen("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
	return nil
}

// SetToken changes the token the server accepts.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Requests is how many requests the server answered.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Data returns the data of a version of the secret at mount/path (0: the
// current one), as a test inspects what was written; false when there is
// none or it is deleted.
func (s *Server) Data(mount, path string, v int) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.mounts[mount][path]
	if sec == nil {
		return nil, false
	}
	if v == 0 {
		v = sec.current
	}
	ver := sec.versions[v]
	if ver == nil || ver.data == nil || !ver.deleted.IsZero() {
		return nil, false
	}
	return maps.Clone(ver.data), true
}

// Paths lists the secret paths of mount that have metadata.
func (s *Server) Paths(mount string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.mounts[mount] {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// serve routes /v1/<mount>/(data|metadata)/<path>.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	// Vault checks the token before it looks at the path.
	if r.Header.Get("X-Vault-Token") != s.token || s.token == "" {
		writeErrors(w, http.StatusForbidden, "permission denied")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		writeErrors(w, http.StatusNotFound)
		return
	}
	for mount, secrets := range s.mounts {
		after, ok := strings.CutPrefix(rest, mount+"/")
		if !ok {
			continue
		}
		kind, path, ok := strings.Cut(after, "/")
		if !ok || path == "" {
			break
		}
		switch kind {
		case "data":
			s.serveData(w, r, secrets, path)
			return
		case "metadata":
			s.serveMetadata(w, r, secrets, path)
			return
		}
		break
	}
	// Vault answers a path no mount or endpoint serves like this.
	writeErrors(w, http.StatusNotFound, "no handler for route \""+rest+"\". route entry not found.")
}

func (s *Server) serveData(w http.ResponseWriter, r *http.Request, secrets map[string]*secret, path string) {
	switch r.Method {
	case http.MethodGet:
		sec := secrets[path]
		if sec == nil {
			writeErrors(w, http.StatusNotFound)
			return
		}
		v := sec.current
		if q := r.URL.Query().Get("version"); q != "" && q != "0" {
			n, err := strconv.Atoi(q)
			if err != nil {
				writeErrors(w, http.StatusBadRequest, "invalid version")
				return
			}
			v = n
		}
		ver := sec.versions[v]
		if ver == nil {
			writeErrors(w, http.StatusNotFound)
			return
		}
		body := map[string]any{"data": ver.data, "metadata": versionMetadata(v, ver, sec.customMetadata)}
		if ver.data == nil || !ver.deleted.IsZero() {
			// A deleted or destroyed version: 404, with its metadata and
			// null data.
			body["data"] = nil
			writeData(w, http.StatusNotFound, body)
			return
		}
		writeData(w, http.StatusOK, body)
	case http.MethodPost, http.MethodPut:
		var req struct {
			Data    map[string]any `json:"data"`
			Options struct {
				CAS *int `json:"cas"`
			} `json:"options"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeErrors(w, http.StatusBadRequest, "error parsing JSON")
			return
		}
		if req.Data == nil {
			writeErrors(w, http.StatusBadRequest, "no data provided")
			return
		}
		sec := secrets[path]
		now := s.now()
		if sec == nil {
			sec = &secret{versions: map[int]*version{}, created: now}
		}
		if req.Options.CAS != nil && *req.Options.CAS != sec.current {
			writeErrors(w, http.StatusBadRequest, "check-and-set parameter did not match the current version")
			return
		}
		secrets[path] = sec
		sec.current++
		sec.updated = now
		ver := &version{data: req.Data, created: now}
		sec.versions[sec.current] = ver
		writeData(w, http.StatusOK, versionMetadata(sec.current, ver, sec.customMetadata))
	case http.MethodDelete:
		// Soft-deletes the current version.
		if sec := secrets[path]; sec != nil {
			if ver := sec.versions[sec.current]; ver != nil && ver.deleted.IsZero() {
				ver.deleted = s.now()
			}
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeErrors(w, http.StatusMethodNotAllowed, "unsupported operation")
	}
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, secrets map[string]*secret, path string) {
	switch r.Method {
	case http.MethodGet:
		sec := secrets[path]
		if sec == nil {
			writeErrors(w, http.StatusNotFound)
			return
		}
		versions := map[string]any{}
		oldest := 0
		for n, ver := range sec.versions {
			versions[strconv.Itoa(n)] = map[string]any{"created_time": ver.created.Format(time.RFC3339Nano),
				"deletion_time": deletionTime(ver), "destroyed": ver.destroyed}
			if oldest == 0 || n < oldest {
				oldest = n
			}
		}
		writeData(w, http.StatusOK, map[string]any{
			"cas_required": false, "created_time": sec.created.Format(time.RFC3339Nano), "current_version": sec.current,
			"custom_metadata": customMetadata(sec.customMetadata), "delete_version_after": "0s", "max_versions": 0,
			"oldest_version": oldest, "updated_time": sec.updated.Format(time.RFC3339Nano), "versions": versions,
		})
	case http.MethodDelete:
		// Deletes the metadata and every version, for good.
		delete(secrets, path)
		w.WriteHeader(http.StatusNoContent)
	default:
		writeErrors(w, http.StatusMethodNotAllowed, "unsupported operation")
	}
}

func versionMetadata(n int, ver *version, custom map[string]string) map[string]any {
	return map[string]any{"created_time": ver.created.Format(time.RFC3339Nano), "custom_metadata": customMetadata(custom),
		"deletion_time": deletionTime(ver), "destroyed": ver.destroyed, "version": n}
}

func customMetadata(m map[string]string) any {
	if m == nil {
		return nil
	}
	return m
}

// deletionTime is "" for a version that is not deleted, as Vault writes it.
func deletionTime(ver *version) string {
	if ver.deleted.IsZero() {
		return ""
	}
	return ver.deleted.Format(time.RFC3339Nano)
}

// writeData writes Vault's response envelope around data.
func writeData(w http.ResponseWriter, status int, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"request_id": "00000000-0000-0000-0000-000000000000", "lease_id": "", "renewable": false, "lease_duration": 0,
		"data": data, "wrap_info": nil, "warnings": nil, "auth": nil, "mount_type": "kv",
	})
}

// writeErrors writes Vault's error body: {"errors":[…]}, empty for a plain
// 404.
func writeErrors(w http.ResponseWriter, status int, errs ...string) {
	if errs == nil {
		errs = []string{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": errs})
}
