// Package errdefs holds the few error classes every bcs-mesos package wraps
// its errors in, so that callers (the REST layer above all) can map a failure
// to a response without parsing messages.
//
// Wrap with %w and quote identifiers:
//
//	fmt.Errorf("application %q: %w", key, errdefs.ErrNotFound)
//
// It must not import any other bcs-mesos package.
package errdefs
