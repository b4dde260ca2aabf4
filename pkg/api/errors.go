package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
)

// errorBody is the one error shape of the API.
type errorBody struct {
	Error errorDetail `json:"error"`
}

// Details is always a list, empty when the error has no field problems, so
// clients read one shape.
type errorDetail struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}

// httpError is a failure of the HTTP exchange itself (media type, size,
// route), which no errdefs class describes.
type httpError struct {
	status  int
	code    string
	message string
}

func (e *httpError) Error() string { return e.message }

// paramsError is a request's query parameters refused, each named.
type paramsError struct{ fields field.ErrorList }

func (e *paramsError) Error() string { return e.fields.ToError().Error() }

// queryError is the error of bad query parameters, nil for none.
func queryError(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &paramsError{errs}
}

// classes maps every errdefs class to its status and code; anything else is
// an internal error.
var classes = []struct {
	class  error
	status int
	code   string
}{
	{errdefs.ErrInvalidArgument, http.StatusBadRequest, "InvalidArgument"},
	{errdefs.ErrNotFound, http.StatusNotFound, "NotFound"},
	{errdefs.ErrAlreadyExists, http.StatusConflict, "AlreadyExists"},
	{errdefs.ErrConflict, http.StatusConflict, "Conflict"},
	{errdefs.ErrUnavailable, http.StatusServiceUnavailable, "Unavailable"},
	{errdefs.ErrTimeout, http.StatusGatewayTimeout, "Timeout"},
	{errdefs.ErrUnauthenticated, http.StatusUnauthorized, "Unauthenticated"},
	{errdefs.ErrPermissionDenied, http.StatusForbidden, "Forbidden"},
}

// writeError answers err in the API's error shape.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorResponse(r, err)
	writeJSON(w, status, body)
}

// errorResponse is the status and body that answer err.
func errorResponse(r *http.Request, err error) (int, errorBody) {
	status, body := http.StatusInternalServerError, errorBody{Error: errorDetail{Code: "Internal", Message: "internal error"}}
	var he *httpError
	var params *paramsError
	var fields field.ErrorList
	switch {
	case errors.As(err, &he):
		status, body.Error = he.status, errorDetail{Code: he.code, Message: he.message}
	case errors.As(err, &params):
		status, body.Error = http.StatusBadRequest, errorDetail{Code: "InvalidArgument", Message: "invalid query parameters", Details: params.fields.Messages()}
	case errors.As(err, &fields):
		status, body.Error = http.StatusBadRequest, errorDetail{Code: "InvalidArgument", Message: "invalid manifest", Details: fields.Messages()}
	default:
		matched := false
		for _, c := range classes {
			if errors.Is(err, c.class) {
				status, body.Error = c.status, errorDetail{Code: c.code, Message: err.Error()}
				matched = true
				break
			}
		}
		if !matched {
			slog.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	body.Error.Details = nonNil(body.Error.Details)
	return status, body
}
