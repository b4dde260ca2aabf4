package bcsctl

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
)

// DefaultServer is the API bcsctl talks to without --server or
// BCS_SERVER: the one `make run` starts.
const DefaultServer = "http://127.0.0.1:8080"

// DefaultTokenFile is the admin token bcsctl sends without --token or
// BCS_TOKEN: the one `make run` (bcs-scheduler --dev in ./bcs-data)
// wrote, looked for in the working directory and each one above it.
const DefaultTokenFile = "bcs-data/admin.token"

// apiClient calls the bcs-scheduler REST API.
type apiClient struct {
	base *url.URL
	http *http.Client
	// token is the bearer token every request carries; "" none. source
	// says where it came from.
	token  string
	source tokenSource
	// warnings gets the text of the answers' Warning headers.
	warnings io.Writer
}

// connection is how bcsctl reaches the API: its URL, the caller's token
// and, over HTTPS, the CA that signed the server's certificate and the
// client certificate that names the caller.
type connection struct {
	server, token                         string
	source                                tokenSource
	caFile, clientCertFile, clientKeyFile string
}

// newAPIClient returns a client of the API at conn.server
// ("http://host:port"; "host:port" means http) that prints the answers'
// warnings to warnings (stderr).
func newAPIClient(conn connection, warnings io.Writer) (*apiClient, error) {
	server := conn.server
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, usageErrorf("--server %q: want http://host:port", server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c := &apiClient{base: u, http: &http.Client{}, token: conn.token, source: conn.source, warnings: warnings}
	// A follower redirects writes to the leader, another host to Go's
	// client, which then drops the Authorization header: the leader the
	// API names is the same API.
	c.http.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		c.authorize(req)
		return nil
	}
	if conn.caFile != "" || conn.clientCertFile != "" || conn.clientKeyFile != "" {
		tlsConfig, err := clientTLS(conn)
		if err != nil {
			return nil, err
		}
		c.http.Transport = &http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyFromEnvironment}
	}
	return c, nil
}

// clientTLS trusts the CA of --certificate-authority and shows the
// certificate of --client-certificate.
func clientTLS(conn connection) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if conn.caFile != "" {
		data, err := os.ReadFile(conn.caFile)
		if err != nil {
			return nil, usageErrorf("--certificate-authority: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return nil, usageErrorf("--certificate-authority %s: no PEM certificate in it", conn.caFile)
		}
	}
	if (conn.clientCertFile == "") != (conn.clientKeyFile == "") {
		return nil, usageErrorf("--client-certificate and --client-key go together")
	}
	if conn.clientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(conn.clientCertFile, conn.clientKeyFile)
		if err != nil {
			return nil, usageErrorf("--client-certificate/--client-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (c *apiClient) authorize(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// apiError is an answer of the API outside 2xx, in its one error shape:
// {"error":{"code","message","details"}}.
type apiError struct {
	Status  int
	Message string
	// Details name the fields at fault ("spec.instance: must be ≥ 0").
	Details []string
	// Hint is what bcsctl adds: which token it sent, or where it looked.
	Hint string
}

func (e *apiError) Error() string {
	s := e.Message
	if len(e.Details) > 0 {
		s += ":\n  " + strings.Join(e.Details, "\n  ")
	}
	if e.Hint != "" {
		s += "\n" + e.Hint
	}
	return s
}

// notFound reports whether err is the API's 404.
func notFound(err error) bool {
	var apiErr *apiError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// notFoundf is a 404 bcsctl finds itself: what it looked for is not in
// the answers.
func notFoundf(format string, args ...any) error {
	return &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

// noInstance says an application has no instance index.
func noInstance(ns, app string, index int) error {
	return notFoundf("%s/%s has no instance %d", ns, app, index)
}

// request sends one call; body, when not nil, goes as JSON (raw bytes as
// they are, anything else encoded). A non-2xx answer is an *apiError.
func (c *apiClient) request(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	var reader io.Reader
	if body != nil {
		data, ok := body.([]byte)
		if !ok {
			var err error
			if data, err = json.Marshal(body); err != nil {
				return nil, err
			}
		}
		reader = bytes.NewReader(data)
	}
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), reader)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach the bcs-scheduler API at %s (--server, BCS_SERVER): %w", c.base, errors.Unwrap(err))
	}
	for _, text := range warningTexts(resp.Header.Values("Warning")) {
		fmt.Fprintf(c.warnings, "Warning: %s\n", text)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		apiErr := readAPIError(resp)
		if resp.StatusCode == http.StatusUnauthorized {
			apiErr.Hint = c.source.hint()
		}
		return nil, apiErr
	}
	return resp, nil
}

// warningTexts are the texts of RFC 7234 Warning header values
// (`299 - "text"`, several to a value separated by commas, each perhaps
// with a date), as kubectl shows them; a value that does not parse is
// shown whole.
func warningTexts(values []string) []string {
	var out []string
	for _, v := range values {
		texts, ok := parseWarnings(v)
		if !ok {
			texts = []string{v}
		}
		out = append(out, texts...)
	}
	return out
}

// parseWarnings parses one Warning header value: warn-code SP warn-agent
// SP quoted warn-text [SP quoted warn-date], comma-separated.
func parseWarnings(v string) ([]string, bool) {
	var texts []string
	for rest := strings.TrimSpace(v); rest != ""; {
		code, after, ok := strings.Cut(rest, " ")
		if !ok || len(code) != 3 {
			return nil, false
		}
		if _, after, ok = strings.Cut(strings.TrimLeft(after, " "), " "); !ok { // the agent
			return nil, false
		}
		quoted, err := strconv.QuotedPrefix(strings.TrimLeft(after, " "))
		if err != nil {
			return nil, false
		}
		text, err := strconv.Unquote(quoted)
		if err != nil {
			return nil, false
		}
		texts = append(texts, text)
		rest = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(after, " "), quoted), " ")
		if date, err := strconv.QuotedPrefix(rest); err == nil {
			rest = strings.TrimLeft(rest[len(date):], " ")
		}
		if rest != "" {
			if rest[0] != ',' {
				return nil, false
			}
			rest = strings.TrimLeft(rest[1:], " ")
		}
	}
	return texts, len(texts) > 0
}

func readAPIError(resp *http.Response) *apiError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body apiv1.ErrorBody
	e := &apiError{Status: resp.StatusCode}
	if json.Unmarshal(data, &body) == nil && body.Error.Message != "" {
		e.Message, e.Details = body.Error.Message, body.Error.Details
		return e
	}
	// Not the API's shape: a proxy, or something else on that port.
	e.Message = fmt.Sprintf("%s %s: %s", resp.Request.Method, resp.Request.URL.Path, resp.Status)
	if text := strings.TrimSpace(string(data)); text != "" {
		e.Message += ": " + firstLine(text)
	}
	return e
}

// call sends one call and returns the answer's body; into, when not nil,
// is decoded from it.
func (c *apiClient) call(ctx context.Context, method, path string, query url.Values, body, into any) ([]byte, error) {
	resp, err := c.request(ctx, method, path, query, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if into != nil && len(data) > 0 {
		if err := json.Unmarshal(data, into); err != nil {
			return nil, fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
		}
	}
	return data, nil
}

// get reads path into into and returns the raw answer.
func (c *apiClient) get(ctx context.Context, path string, query url.Values, into any) ([]byte, error) {
	return c.call(ctx, http.MethodGet, path, query, nil, into)
}

// listPage is how many items bcsctl asks for at a time: a list of any
// length comes in answers of bounded size.
const listPage = 500

// list reads every page of a list route: the items under key.
func (c *apiClient) list(ctx context.Context, path, key string, query url.Values) ([]json.RawMessage, error) {
	q := maps.Clone(query)
	if q == nil {
		q = url.Values{}
	}
	q.Set("limit", strconv.Itoa(listPage))
	var items []json.RawMessage
	for {
		var page map[string]json.RawMessage
		if _, err := c.get(ctx, path, q, &page); err != nil {
			return nil, err
		}
		var some []json.RawMessage
		if err := json.Unmarshal(page[key], &some); err != nil {
			return nil, fmt.Errorf("GET %s: %q: %w", path, key, err)
		}
		items = append(items, some...)
		var next string
		if raw, ok := page["next"]; ok {
			if err := json.Unmarshal(raw, &next); err != nil {
				return nil, fmt.Errorf("GET %s: next: %w", path, err)
			}
		}
		if next == "" {
			return items, nil
		}
		q.Set("after", next)
	}
}

// stream opens a long answer (logs, the event stream); the caller closes
// its body.
func (c *apiClient) stream(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	resp, err := c.request(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// pathOf joins escaped path segments under /v1.
func pathOf(segments ...string) string {
	var b strings.Builder
	b.WriteString("/v1")
	for _, s := range segments {
		b.WriteString("/" + url.PathEscape(s))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
