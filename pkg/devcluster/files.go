package devcluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// sandboxFiles is an agent's files API (Mesos src/files/files.cpp):
// real directories and files attached under virtual paths, which
// GET /files/read, /files/browse and /files/download name. A request's
// path resolves through the longest attached prefix; what follows it is
// looked up inside the attached directory and may not lead out of it.
type sandboxFiles struct {
	mu    sync.Mutex
	paths map[string]string // virtual path (no trailing slash) → real path
}

func newSandboxFiles() *sandboxFiles { return &sandboxFiles{paths: map[string]string{}} }

// attach makes the real path readable under virtual; a virtual path
// attached again takes the new real path.
func (f *sandboxFiles) attach(real, virtual string) error {
	resolved, err := filepath.EvalSymlinks(real)
	if err == nil {
		resolved, err = filepath.Abs(resolved)
	}
	if err != nil {
		return fmt.Errorf("failed to get realpath of '%s': %w", real, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths[trimOne(virtual, "/")] = resolved
	return nil
}

func (f *sandboxFiles) detach(virtual string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.paths, virtual)
}

// errInaccessible is a path that resolves outside its attached directory.
var errInaccessible = errors.New("inaccessible")

// resolve returns the real path of a virtual one, "" when nothing is
// there, or an error when the path cannot be resolved or leads out of
// the directory it is attached under (FilesProcess::resolve).
func (f *sandboxFiles) resolve(path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tokens := strings.Split(trimOne(path, "/"), "/")
	suffix := ""
	for len(tokens) > 0 {
		prefix := tokens[0]
		for _, t := range tokens[1:] {
			prefix = joinPath(prefix, t)
		}
		attached, ok := f.paths[prefix]
		if !ok {
			last := tokens[len(tokens)-1]
			if suffix == "" {
				suffix = last
			} else {
				suffix = joinPath(last, suffix)
			}
			tokens = tokens[:len(tokens)-1]
			continue
		}
		if fi, err := os.Stat(attached); err != nil || !fi.IsDir() {
			if suffix != "" {
				return "", nil // a file has no children: not found
			}
			return attached, nil
		}
		full := joinPath(attached, suffix)
		real, err := filepath.EvalSymlinks(full)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return "", nil
		case err != nil:
			//lint:ignore ST1005 Mesos' own message, which the client gets
			return "", fmt.Errorf("Failed to determine canonical path of '%s': %v", full, err)
		}
		if real != attached && !strings.HasPrefix(real, attached+"/") {
			return "", fmt.Errorf("'%s' is %w", full, errInaccessible)
		}
		return real, nil
	}
	return "", nil
}

// debug is the virtual path map, for /files/debug.
func (f *sandboxFiles) debug() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.paths))
	for v, r := range f.paths {
		out[v] = r
	}
	return out
}

// joinPath joins two path parts with one slash, as stout's path::join.
func joinPath(a, b string) string { return trimOne(a, "/") + "/" + strings.TrimPrefix(b, "/") }

// trimOne removes one trailing occurrence of suffix, as stout's
// strings::remove(…, SUFFIX).
func trimOne(s, suffix string) string { return strings.TrimSuffix(s, suffix) }

// maxReadLength caps one /files/read at 16 pages, like Mesos.
var maxReadLength = int64(16 * os.Getpagesize())

// serveRead answers GET /files/read?path=&offset=&length=: up to length
// bytes (to the end, capped at 16 pages) from offset, as
// {"data":"…","offset":N}. Without an offset or with offset=-1 it reads
// nothing and answers the file's size as the offset; an offset at or
// past the end answers no data and that offset.
// readCount reads the read parameter name as Mesos does: absent is -1, a
// number below -1 or no number is a 400 in Mesos' words; false when it
// answered that.
func readCount(w http.ResponseWriter, q url.Values, name string) (int64, bool) {
	if !q.Has(name) {
		return -1, true
	}
	n, err := strconv.ParseInt(q.Get(name), 10, 64)
	switch {
	case err != nil:
		writeText(w, http.StatusBadRequest, "Failed to parse "+name+": Failed to convert '"+q.Get(name)+"' to number.\n")
		return 0, false
	case n < -1:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Negative %s provided: %d.\n", name, n))
		return 0, false
	}
	return n, true
}

func (f *sandboxFiles) serveRead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := q.Get("path")
	if path == "" {
		writeText(w, http.StatusBadRequest, "Expecting 'path=value' in query.\n")
		return
	}
	offset, ok := readCount(w, q, "offset") // -1 or absent: the size
	if !ok {
		return
	}
	length, ok := readCount(w, q, "length") // -1 or absent: to the end
	if !ok {
		return
	}
	from := offset
	if offset == -1 { // the web UI's pailer asks for the size first
		from, length = 0, 0
	}
	size, data, herr := f.read(path, from, length)
	if herr != nil {
		writeText(w, herr.code, herr.msg)
		return
	}
	if offset == -1 {
		offset = size
	}
	body := []byte(`{"data":`)
	body = appendMesosString(body, data)
	body = append(body, `,"offset":`...)
	body = strconv.AppendInt(body, offset, 10)
	body = append(body, '}')
	writeJSONP(w, r, body)
}

// read returns the file's size and up to length bytes (-1: to the end)
// from offset (FilesProcess::_read).
func (f *sandboxFiles) read(path string, offset, length int64) (int64, []byte, *httpError) {
	real, herr := f.resolveFile(path, "read")
	if herr != nil {
		return 0, nil, herr
	}
	file, err := os.Open(real)
	if err != nil {
		return 0, nil, &httpError{http.StatusInternalServerError, fmt.Sprintf("Failed to open file at '%s': %v.\n", real, err)}
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, nil, &httpError{http.StatusInternalServerError, fmt.Sprintf("Failed to open file at '%s': %v.\n", real, err)}
	}
	size := fi.Size()
	if offset >= size || length == 0 {
		return size, nil, nil
	}
	if length < 0 {
		length = size - offset
	}
	length = min(length, maxReadLength)
	data := make([]byte, length)
	n, err := file.ReadAt(data, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, &httpError{http.StatusInternalServerError, fmt.Sprintf("Failed to read file at '%s': %v", real, err)}
	}
	return size, data[:n], nil
}

// resolveFile resolves a path that must name a file (what says what the
// request does: "read" or "download"). Not found is a 404 with an empty
// body, as /files/read answers.
func (f *sandboxFiles) resolveFile(path, what string) (string, *httpError) {
	real, err := f.resolve(path)
	switch {
	case err != nil:
		return "", &httpError{http.StatusBadRequest, err.Error() + ".\n"}
	case real == "":
		return "", &httpError{http.StatusNotFound, ""}
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return "", &httpError{http.StatusBadRequest, "Cannot " + what + " a directory.\n"}
	}
	return real, nil
}

// serveBrowse answers GET /files/browse?path=: the directory's entries,
// sorted, as Mesos' FileInfo JSON model; a file lists nothing.
func (f *sandboxFiles) serveBrowse(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		writeText(w, http.StatusBadRequest, "Expecting 'path=value' in query.\n")
		return
	}
	real, err := f.resolve(path)
	switch {
	case err != nil:
		writeText(w, http.StatusBadRequest, err.Error()+".\n")
		return
	case real == "":
		writeText(w, http.StatusNotFound, "")
		return
	}
	entries, _ := os.ReadDir(real) // a file, or unreadable: nothing listed
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	body := []byte{'['}
	for _, name := range names {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(real, name), &st); err != nil {
			continue // gone since the listing
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = appendFileInfo(body, joinPath(path, name), &st)
	}
	body = append(body, ']')
	writeJSONP(w, r, body)
}

// appendFileInfo writes Mesos' JSON model of a FileInfo
// (src/common/http.cpp), keys sorted: mtime in seconds as a double, mode
// as ls shows it, owner and group by name when they have one.
func appendFileInfo(b []byte, path string, st *syscall.Stat_t) []byte {
	b = append(b, `{"gid":`...)
	b = appendMesosString(b, []byte(groupName(st.Gid)))
	b = append(b, `,"mode":`...)
	b = appendMesosString(b, []byte(modeString(st.Mode)))
	b = append(b, `,"mtime":`...)
	b = strconv.AppendInt(b, st.Mtim.Sec, 10)
	b = append(b, ".0"...)
	b = append(b, `,"nlink":`...)
	b = strconv.AppendUint(b, uint64(st.Nlink), 10)
	b = append(b, `,"path":`...)
	b = appendMesosString(b, []byte(path))
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, `,"uid":`...)
	b = appendMesosString(b, []byte(userName(st.Uid)))
	return append(b, '}')
}

func modeString(mode uint32) string {
	kind := byte('-')
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		kind = 'd'
	case syscall.S_IFCHR:
		kind = 'c'
	case syscall.S_IFBLK:
		kind = 'b'
	case syscall.S_IFIFO:
		kind = 'p'
	case syscall.S_IFLNK:
		kind = 'l'
	case syscall.S_IFSOCK:
		kind = 's'
	}
	out := []byte{kind}
	for i := 8; i >= 0; i-- {
		if mode&(1<<i) == 0 {
			out = append(out, '-')
		} else {
			out = append(out, "rwx"[(8-i)%3])
		}
	}
	return string(out)
}

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return id
}

func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

// serveDownload answers GET /files/download?path=: the file's bytes as an
// attachment, typed by its extension (application/octet-stream without
// one).
func (f *sandboxFiles) serveDownload(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		writeText(w, http.StatusBadRequest, "Expecting 'path=value' in query.\n")
		return
	}
	real, herr := f.resolveFile(path, "download")
	if herr != nil {
		if herr.code == http.StatusNotFound {
			herr.msg = "404 Not Found." // download answers NotFound() with its default body
		}
		writeText(w, herr.code, herr.msg)
		return
	}
	file, err := os.Open(real)
	if err != nil {
		writeText(w, http.StatusNotFound, "404 Not Found.")
		return
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		writeText(w, http.StatusInternalServerError, err.Error())
		return
	}
	contentType := "application/octet-stream"
	if ext := filepath.Ext(real); ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			contentType = t
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", "attachment; filename="+filepath.Base(real))
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.CopyN(w, file, fi.Size())
}

// serveDebug answers GET /files/debug: the virtual path map.
func (f *sandboxFiles) serveDebug(w http.ResponseWriter, r *http.Request) {
	paths := f.debug()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	body := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			body = append(body, ',')
		}
		body = appendMesosString(body, []byte(k))
		body = append(body, ':')
		body = appendMesosString(body, []byte(paths[k]))
	}
	body = append(body, '}')
	writeJSONP(w, r, body)
}

func writeText(w http.ResponseWriter, code int, body string) {
	writeHTTPError(w, &httpError{code, body})
}

// writeJSONP answers 200 with a JSON body, wrapped as callback(…) when
// the request names a ?jsonp= callback, as libprocess' OK(JSON) does.
func writeJSONP(w http.ResponseWriter, r *http.Request, body []byte) {
	if cb := r.URL.Query().Get("jsonp"); r.URL.Query().Has("jsonp") {
		w.Header().Set("Content-Type", "text/javascript")
		body = append(append([]byte(cb+"("), body...), ')')
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// appendMesosString writes s as a JSON string the way Mesos' JSON writer
// (rapidjson, no encoding validation) does: quote, backslash and control
// characters escaped, every other byte as it is, so file contents that
// are not UTF-8 arrive byte for byte.
func appendMesosString(b []byte, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
