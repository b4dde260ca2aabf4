package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/field"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

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

// writeError answers err in the API's error shape, and logs what the
// server should know of it.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorResponse(r, err)
	logError(r, status, err)
	writeJSON(w, status, body)
}

// logError logs a failed request: an internal error as an error; a write
// the store refused with the key and revisions its client is not shown;
// one whose client went away (it closed the event stream, it was
// interrupted) only at debug level, as that is the client's to decide.
func logError(r *http.Request, status int, err error) {
	var refused *store.PreconditionError
	switch {
	case r.Context().Err() != nil:
		slog.Debug("request ended: the client went away", "method", r.Method, "path", r.URL.Path, "err", err)
	case status == http.StatusInternalServerError:
		slog.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case errors.As(err, &refused):
		slog.Info("write refused: the stored object is not as the request expected", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
}

// errorResponse is the status and body that answer err.
func errorResponse(r *http.Request, err error) (int, apiv1.ErrorBody) {
	status, body := http.StatusInternalServerError, apiv1.ErrorBody{Error: apiv1.ErrorDetail{Code: "Internal", Message: "internal error"}}
	var he *httpError
	var params *paramsError
	var fields field.ErrorList
	var refused *store.PreconditionError
	switch {
	case errors.As(err, &he):
		status, body.Error = he.status, apiv1.ErrorDetail{Code: he.code, Message: he.message}
	case errors.As(err, &params):
		status, body.Error = http.StatusBadRequest, apiv1.ErrorDetail{Code: "InvalidArgument", Message: "invalid query parameters", Details: params.fields.Messages()}
	case errors.As(err, &fields):
		status, body.Error = http.StatusBadRequest, apiv1.ErrorDetail{Code: "InvalidArgument", Message: "invalid manifest", Details: fields.Messages()}
	default:
		for _, c := range classes {
			if errors.Is(err, c.class) {
				status, body.Error = c.status, apiv1.ErrorDetail{Code: c.code, Message: err.Error()}
				break
			}
		}
		if errors.As(err, &refused) {
			body.Error.Message = refusedWrite(r, err, refused)
		}
	}
	body.Error.Details = nonNil(body.Error.Details)
	return status, body
}

// refusedWrite tells a client what to do about a write the store refused
// on its precondition, in the terms of the API: the object as the
// registry named it before the store's words ("deployment demo/fleet"),
// and its revision as GET shows it. The key and the op are the server's.
func refusedWrite(r *http.Request, err error, refused *store.PreconditionError) string {
	what, ok := strings.CutSuffix(err.Error(), ": "+refused.Error())
	if !ok || what == "" {
		what = "the object"
	}
	switch {
	case errors.Is(refused, errdefs.ErrAlreadyExists):
		return what + " exists already: change it with PUT (bcsctl apply), or delete it first"
	case errors.Is(refused, errdefs.ErrNotFound):
		return what + " was deleted meanwhile"
	case r.Header.Get("If-Match") != "":
		return fmt.Sprintf("%s changed since revision %d (it is at revision %d now): read it again and retry",
			what, refused.Expected, refused.Current)
	}
	return fmt.Sprintf("%s changed while this request was applied (it is at revision %d now): retry", what, refused.Current)
}
