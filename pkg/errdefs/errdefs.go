package errdefs

import "errors"

// The error classes. Every error a package returns across its API should
// wrap exactly one of them.
var (
	// ErrNotFound: the named object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidArgument: the input is malformed or violates a rule; retrying
	// the same input cannot succeed.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrAlreadyExists: a create named an object that already exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict: the object changed since it was read (optimistic
	// concurrency); re-read and retry.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: a dependency (etcd, the Mesos master, dockerd) cannot be
	// reached now; retrying later may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrTimeout: no answer came in time (an executor's to a message); what
	// was asked may still be carried out.
	ErrTimeout = errors.New("timed out")
	// ErrUnauthenticated: the request carries no credentials, or ones
	// that name nobody.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: the caller is known but its role does not allow
	// what it asked.
	ErrPermissionDenied = errors.New("permission denied")
)

// Class returns the class err wraps, or nil when it wraps none (an internal
// error).
func Class(err error) error {
	for _, class := range []error{ErrNotFound, ErrInvalidArgument, ErrAlreadyExists, ErrConflict, ErrUnavailable, ErrTimeout, ErrUnauthenticated, ErrPermissionDenied} {
		if errors.Is(err, class) {
			return class
		}
	}
	return nil
}
