// Package apiv1 holds the request and response types of bcs-scheduler's
// v1 REST API, JSON-tagged: what the server (pkg/api) answers and reads,
// what bcsctl decodes, and what GET /openapi.json describes, each
// defined once (as Nomad's api package is for its server and CLI). A
// field added here is seen by all three.
//
// It is types only: the server builds them from its records (pkg/api),
// and where a view shows a stored record as it is (a pending verdict, a
// hook run, a plan), the type here is the record's wire form, kept field
// for field by a test in pkg/api.
//
// It must not import Mesos packages, the store or the registry, or
// net/http: it sits low, beside the manifests it embeds (pkg/manifest)
// and the rollout status it shows (pkg/rollout), so that a client
// imports it without the server.
package apiv1
