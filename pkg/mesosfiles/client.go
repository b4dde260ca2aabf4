package mesosfiles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// DefaultTimeout bounds one read when the caller's HTTP client has none.
const DefaultTimeout = 30 * time.Second

// maxErrorBody is how much of an error response's text is kept.
const maxErrorBody = 1 << 10

// SandboxPath is the virtual path of a file in the latest run of an
// executor's sandbox.
func SandboxPath(frameworkID, executorID, file string) string {
	return "/frameworks/" + frameworkID + "/executors/" + executorID + "/runs/latest/" + file
}

// Client reads files through agents' files API. It is safe for
// concurrent use.
type Client struct {
	// HTTP makes the requests; nil is a client with DefaultTimeout.
	HTTP *http.Client
	// Scheme is how agents serve: "http" (the default) or "https", as
	// Mesos agents do with LIBPROCESS_SSL_ENABLED.
	Scheme string
}

var defaultHTTP = &http.Client{Timeout: DefaultTimeout}

// Size returns the size of the file at path on the agent at endpoint
// (host:port).
func (c *Client) Size(ctx context.Context, endpoint, path string) (int64, error) {
	r, err := c.read(ctx, endpoint, path, -1, 0)
	if err != nil {
		return 0, err
	}
	return r.Offset, nil
}

// Read returns up to length bytes of the file from offset: fewer when the
// agent caps the read or the file ends, none at or past its end.
func (c *Client) Read(ctx context.Context, endpoint, path string, offset, length int64) ([]byte, error) {
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("read %s from %d for %d: %w", path, offset, length, errdefs.ErrInvalidArgument)
	}
	r, err := c.read(ctx, endpoint, path, offset, length)
	if err != nil {
		return nil, err
	}
	return unquote(r.Data)
}

type readResponse struct {
	Data   json.RawMessage `json:"data"`
	Offset int64           `json:"offset"`
}

func (c *Client) read(ctx context.Context, endpoint, path string, offset, length int64) (*readResponse, error) {
	q := url.Values{"path": {path}, "offset": {strconv.FormatInt(offset, 10)}, "length": {strconv.FormatInt(length, 10)}}
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+endpoint+"/files/read?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %v: %w", endpoint, err, errdefs.ErrInvalidArgument)
	}
	h := c.HTTP
	if h == nil {
		h = defaultHTTP
	}
	resp, err := h.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %v: %w", endpoint, err, errdefs.ErrUnavailable)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("agent %s: reading %s: %v: %w", endpoint, path, err, errdefs.ErrUnavailable)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("agent %s has no file %s: %w", endpoint, path, errdefs.ErrNotFound)
	default:
		return nil, fmt.Errorf("agent %s: reading %s: %s %q: %w", endpoint, path, resp.Status, truncate(body), errdefs.ErrUnavailable)
	}
	var r readResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("agent %s: reading %s: %v: %w", endpoint, path, err, errdefs.ErrUnavailable)
	}
	return &r, nil
}

func truncate(b []byte) string {
	if len(b) > maxErrorBody {
		b = b[:maxErrorBody]
	}
	return strings.TrimSpace(string(b))
}

var errNotString = errors.New("data is not a JSON string")

// unquote decodes a JSON string keeping every byte that is not part of
// an escape as it is.
func unquote(s []byte) ([]byte, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, errNotString
	}
	s = s[1 : len(s)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		if i == len(s) {
			return nil, errNotString
		}
		switch s[i] {
		case '"', '\\', '/':
			out = append(out, s[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return nil, errNotString
			}
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if low, ok := hex4(s[i+3:]); ok {
					if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errNotString
		}
	}
	return out, nil
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[:4]), 16, 16)
	return rune(n), err == nil
}
