package remotefile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// SafeURL is raw for messages and logs: without its userinfo.
func SafeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	u.User = nil
	return u.String()
}

// StatusError is an HTTP answer Get does not accept.
type StatusError struct {
	URL  string // without credentials
	Code int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP status %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

func (e *StatusError) Unwrap() error { return errdefs.ErrUnavailable }

// Get sends GET u, which carries no userinfo, with basic auth when user
// is set and the extra header, through client (nil: http.DefaultClient).
// It returns the response when its status is 2xx or one of accept;
// otherwise a *StatusError. Transport errors name u and never the
// credentials.
func Get(ctx context.Context, client *http.Client, u *url.URL, user, password string, header http.Header, accept ...int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v: %w", SafeURL(u.String()), err, errdefs.ErrInvalidArgument)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		class := errdefs.ErrUnavailable
		if errors.Is(err, errdefs.ErrPermissionDenied) { // the egress policy: trying again changes nothing
			class = errdefs.ErrPermissionDenied
		}
		return nil, fmt.Errorf("GET %s: %s: %w", SafeURL(u.String()), cause(err, u), class)
	}
	if resp.StatusCode/100 != 2 && !slices.Contains(accept, resp.StatusCode) {
		resp.Body.Close()
		return nil, &StatusError{URL: SafeURL(u.String()), Code: resp.StatusCode}
	}
	return resp, nil
}

// cause is a client error without the request URL (url.Error quotes it)
// and so without anything that could carry credentials.
func cause(err error, u *url.URL) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return strings.ReplaceAll(err.Error(), u.String(), SafeURL(u.String()))
}
