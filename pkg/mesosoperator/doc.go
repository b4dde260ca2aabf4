// Package mesosoperator is bcs-mesos' client of the Mesos master's
// operator API (POST /api/v1, docs/operator-http-api.md): it lists the
// agents the master knows (GET_AGENTS), drains, deactivates and
// reactivates agents (DRAIN_AGENT, DEACTIVATE_AGENT, REACTIVATE_AGENT,
// Mesos ≥ 1.9) and reads the maintenance status (GET_MAINTENANCE_STATUS),
// against a real master or the dev cluster alike, in protobuf or JSON.
//
// Responses decode with pkg/mesoswire's codecs, so enum values a newer
// master adds (a capability, a drain state) are dropped instead of
// failing the call. What it returns are plain Go values: agents with
// their attributes as constraint values and their resources as offer
// resources, the types the placement engine reads. A failed call names
// the call and wraps an errdefs class: 400, 401, 403 and 501 from the
// master are ErrInvalidArgument (the same call cannot succeed later), 409
// ErrConflict, anything else (unreachable, 5xx, an undecodable body)
// ErrUnavailable. A non-leading master's redirect is followed.
//
// It must not import bcs-mesos packages other than pkg/mesoswire,
// pkg/errdefs, and pkg/offer and pkg/constraint for the types it returns.
package mesosoperator
