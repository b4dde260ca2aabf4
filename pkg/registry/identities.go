package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// A namespace's own uid on the agents is recorded twice, created together
// in one transaction and never changed: namespaceuids/<namespace> holds
// the uid, uids/<uid> the namespace. Either key existing makes the
// creation fail, so two replicas, or a replica that crashed halfway, can
// never give one uid to two namespaces nor two uids to one.

type namespaceUIDRecord struct {
	UID uint32 `json:"uid"`
}

type uidRecord struct {
	Namespace string `json:"namespace"`
}

// NamespaceUID returns namespace's own uid; found is false while it has
// none.
func (r *Registry) NamespaceUID(ctx context.Context, namespace string) (uid uint32, found bool, err error) {
	key, err := store.Key(store.KindNamespaceUID, namespace)
	if err != nil {
		return 0, false, err
	}
	rec, _, err := store.GetJSON[namespaceUIDRecord](ctx, r.store, key)
	if errors.Is(err, errdefs.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return rec.UID, true, nil
}

// maxUIDAttempts bounds how often EnsureNamespaceUID starts over when
// another writer took the uid it chose.
const maxUIDAttempts = 16

// EnsureNamespaceUID returns namespace's own uid, giving it the lowest
// uid of uids no namespace holds the first time. A namespace keeps its
// uid for good, even when the range changes later: files on the agents
// belong to it. A range whose every uid is taken is
// errdefs.ErrUnavailable, naming it.
func (r *Registry) EnsureNamespaceUID(ctx context.Context, namespace string, uids identity.Range) (uint32, error) {
	if uids.Off() {
		return 0, fmt.Errorf("namespace %q: no --namespace-uids to give a uid from: %w", namespace, errdefs.ErrInvalidArgument)
	}
	nsKey, err := store.Key(store.KindNamespaceUID, namespace)
	if err != nil {
		return 0, err
	}
	for range maxUIDAttempts {
		uid, found, err := r.NamespaceUID(ctx, namespace)
		if err != nil || found {
			return uid, err
		}
		uid, err = r.freeUID(ctx, uids)
		if err != nil {
			return 0, fmt.Errorf("namespace %q gets no uid: %w", namespace, err)
		}
		uidKey, err := store.Key(store.KindUID, strconv.FormatUint(uint64(uid), 10))
		if err != nil {
			return 0, err
		}
		nsValue, _ := json.Marshal(namespaceUIDRecord{UID: uid})
		uidValue, _ := json.Marshal(uidRecord{Namespace: namespace})
		_, err = r.store.Apply(ctx, store.CreateOp(nsKey, nsValue), store.CreateOp(uidKey, uidValue))
		if err == nil {
			return uid, nil
		}
		if !errors.Is(err, errdefs.ErrAlreadyExists) {
			return 0, fmt.Errorf("namespace %q: record uid %d: %w", namespace, uid, err)
		}
		// Another writer gave the namespace a uid, or took this one: look
		// again.
	}
	return 0, fmt.Errorf("namespace %q: no uid recorded after %d attempts, others writing the same uids: %w", namespace, maxUIDAttempts, errdefs.ErrConflict)
}

// freeUID returns the lowest uid of uids that no namespace holds.
func (r *Registry) freeUID(ctx context.Context, uids identity.Range) (uint32, error) {
	prefix, err := store.Prefix(store.KindUID)
	if err != nil {
		return 0, err
	}
	taken := map[uint32]bool{}
	if _, err := r.store.Each(ctx, prefix, func(e store.Entry) error {
		if n, err := strconv.ParseUint(strings.TrimPrefix(e.Key, prefix), 10, 32); err == nil {
			taken[uint32(n)] = true
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for uid := uids.First; ; uid++ {
		if !taken[uid] {
			return uid, nil
		}
		if uid == uids.Last {
			break
		}
	}
	return 0, fmt.Errorf("every one of the %d uids of --namespace-uids %s is another namespace's: %w", uids.Size(), uids, errdefs.ErrUnavailable)
}
