package registry

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/store"
)

// AuditEntry is one write to the API: who sent it, what it was and how it
// was answered. It holds no request body, query, token or secret value.
type AuditEntry struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	User string    `json:"user"`
	Role string    `json:"role"`
	// Method and Route are the request's method and the route it took,
	// "POST /v1/apps/{ns}/{name}/scale"; Path is the path it was sent to.
	Method    string `json:"method"`
	Route     string `json:"route"`
	Path      string `json:"path"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Status    int    `json:"status"`
	// Code is the API's error code of a refused or failed write.
	Code string `json:"code,omitempty"`
}

// AuditPrefix is where the audit log is.
var AuditPrefix = string(store.KindAudit) + "/"

// auditSeq tells apart the entries this process makes in one nanosecond.
var auditSeq atomic.Uint64

// AppendAudit stores e (its ID is set from its time) and trims the log to
// its keep newest entries.
func (r *Registry) AppendAudit(ctx context.Context, e *AuditEntry, keep int64) error {
	e.ID = fmt.Sprintf("%s-%06d", e.Time.UTC().Format("20060102T150405.000000000Z"), auditSeq.Add(1)%1_000_000)
	key, err := store.Key(store.KindAudit, e.ID)
	if err != nil {
		return err
	}
	if _, err := store.CreateJSON(ctx, r.store, key, e); err != nil {
		return fmt.Errorf("audit entry %q: %w", e.ID, err)
	}
	if _, err := r.store.Trim(ctx, AuditPrefix, keep); err != nil {
		return fmt.Errorf("trimming the audit log: %w", err)
	}
	return nil
}

// ListAudit returns the audit log, oldest first.
func (r *Registry) ListAudit(ctx context.Context) ([]AuditEntry, error) {
	found, err := store.ListJSON[AuditEntry](ctx, r.store, AuditPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, len(found))
	for i := range found {
		out[i] = found[i].Value
	}
	return out, nil
}
