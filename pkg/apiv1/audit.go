package apiv1

import "time"

// AuditEntry is one write in the audit log (GET /v1/audit).
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

// AuditPage is a page of GET /v1/audit.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	Next    string       `json:"next,omitempty"`
}
