package store

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// ErrCompacted is delivered by Watch when fromRev is older than the oldest
// revision etcd still keeps. It is an errdefs.ErrConflict: re-list with
// ListWithRevision and watch again from the listed revision + 1.
var ErrCompacted = fmt.Errorf("revision compacted: %w", errdefs.ErrConflict)

// classify wraps an error from the etcd client in the errdefs class that
// describes it. what names the request, e.g. `get "apps/ns/web"`; it must
// never contain a value. ctx is the caller's context: when the caller
// cancelled it, the result wraps context.Canceled and no class (nothing is
// wrong with etcd); a request that ran out of time, the caller's or
// Config.RequestTimeout, is errdefs.ErrUnavailable.
func classify(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("etcd %s: %w", what, context.Canceled)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, clientv3.ErrNoAvailableEndpoints) {
		return fmt.Errorf("etcd %s: %w: %w", what, errdefs.ErrUnavailable, err)
	}
	switch code := grpcCode(err); {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("etcd %s: %w", what, ErrCompacted)
	case errors.Is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("etcd %s: %w", what, ErrNoSpace)
	case code == codes.Unavailable, code == codes.DeadlineExceeded, code == codes.Canceled,
		code == codes.ResourceExhausted, code == codes.Aborted:
		return fmt.Errorf("etcd %s: %w: %w", what, errdefs.ErrUnavailable, err)
	case code == codes.InvalidArgument, code == codes.OutOfRange:
		return fmt.Errorf("etcd %s: %w: %w", what, errdefs.ErrInvalidArgument, err)
	}
	return fmt.Errorf("etcd %s: %w", what, err)
}

func grpcCode(err error) codes.Code {
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		return etcdErr.Code()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}
