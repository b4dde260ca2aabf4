// Package mesosfiles is bcs-mesos' client of a Mesos agent's files API
// (GET /files/read on the agent's own address, src/files/files.cpp): it
// reads a file of an executor's sandbox by its virtual path,
// /frameworks/<framework>/executors/<executor>/runs/latest/<file>, as a
// Mesos 1.12 agent attaches it and the dev cluster's agents serve it.
//
// One read returns what the agent gives — it caps a read at 16 pages —
// and the file's bytes exactly: the agent writes them into its JSON
// unvalidated, so the data string is decoded here keeping bytes that are
// not UTF-8, which encoding/json would replace. A failed read names the
// agent and wraps an errdefs class: the agent answering 404 (no such
// file, or a sandbox collected) is ErrNotFound; an agent that cannot be
// reached or answers anything else is ErrUnavailable.
//
// An agent of a cluster with LIBPROCESS_SSL_ENABLED serves HTTPS
// (Client.Scheme); the Client's HTTP client carries the TLS settings and
// any credential.
//
// It must not import bcs-mesos packages other than pkg/errdefs, nor
// Mesos packages: the files API is plain HTTP(S) and JSON.
package mesosfiles
