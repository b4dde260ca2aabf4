// Package apiv1 holds the request and response types of bcs-scheduler's
// v1 REST API, JSON-tagged: what the server (pkg/api) reads and answers,
// what bcsctl sends and decodes, and what GET /openapi.json describes,
// each defined once (as Nomad's api package is for its server and CLI).
// A field added here is seen by all three.
//
// It is types only: the server builds them from its records (pkg/api's
// wire.go) and checks the requests. Where the API shows a stored record
// as it is (a hook run, a plan, a version, a callback), the type here is
// the record's wire form, and a test in pkg/api holds the two to one
// JSON encoding.
//
// It must not import Mesos packages, the store, the registry or
// net/http: it sits low, beside the manifests it embeds (pkg/manifest),
// the rollout status it shows (pkg/rollout) and the executor's message
// types (proto), so that a client imports it without the server.
package apiv1
