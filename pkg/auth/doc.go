// Package auth says who sends a request to bcs-scheduler's API and what
// that caller may do.
//
// Callers are named by bearer tokens from a static token file (one line
// per token: token,user,role[,namespace;namespace…], ParseTokens) or by
// TLS client certificates, whose common name is the user and whose role
// comes from the --cert-roles file or the user's line in the token file
// (Authenticator). Without a token file the scheduler makes one admin
// token and keeps it in a file (EnsureAdminToken). The web console keeps
// its caller's token in a session cookie (SessionCookie), which names the
// caller of a read, and of a write only with the console's own header
// (ConsoleHeader), which another site's page cannot send.
//
// Three roles (Role): read-only reads everything, operator reads and
// writes only its namespaces and reads the cluster-wide state, admin does
// everything. Identity.Authorize decides one Access; the REST layer
// (pkg/api) works out each route's Access and answers the errors, which
// wrap errdefs.ErrUnauthenticated (401) and errdefs.ErrPermissionDenied
// (403).
//
// Tokens are kept as SHA-256 digests and never appear in an error.
//
// The token file and the --cert-roles file are read again when they
// change: a rotated token works, and a revoked one stops, at once.
//
// It must not import the store or any Mesos package; of bcs-mesos it uses
// only pkg/manifest (the namespace rule), pkg/errdefs and pkg/reloadfile.
package auth
