// Package api is bcs-scheduler's REST JSON API: manifests in (applications,
// processes, deployments, configmaps, secrets), validated with every problem
// named by its field path, stored through pkg/registry, and state out.
//
// Errors have one shape,
//
//	{"error":{"code":"InvalidArgument","message":"…","details":["spec.instance: must be ≥ 0"]}}
//
// mapped from the errdefs classes in one place (errors.go). Operations the
// scheduler carries out later (delete, scale) answer 202 Accepted and their
// progress is read back with GET. On a follower replica, writes are
// redirected to the leader with 307.
//
// It must not import Mesos packages; it knows the scheduler only through the
// registry and the Leadership interface.
package api
