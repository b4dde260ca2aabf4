// Package notify is the notifier (seed 002's notifyController): on the
// leading scheduler it delivers the notifications the scheduler core
// stored (instance exit, missing, noIP, flapping; pkg/scheduler
// notices.go) to the registered callbacks, from the durable outbox under
// notifications/ that is also the delivery log.
//
// A notification is first addressed: every callback registered when it
// was made (CreatedAt not after its time) whose event filter takes its
// type gets a Pending delivery. Each delivery is a POST of the notice as
// JSON with its ID in the X-BCS-Event-ID header, retried on failure (no
// answer, or not 2xx; redirects are not followed) with exponential
// backoff — MinBackoff doubling to MaxBackoff — until MaxAttempts, then
// Failed. A delivery whose callback is deleted is Cancelled.
//
// Every attempt is recorded before it is made, with a compare-and-swap
// write that sets its next attempt past its timeout, and its outcome
// after; so two notifiers (an old leader not yet stopped and a new one)
// never make the same attempt, and a notifier killed at any point loses
// nothing: the next one resumes from the records. Delivery is at least
// once: a notifier killed after the receiver answered 2xx and before the
// outcome was written leaves the attempt to be made again, and that
// receiver sees the same X-BCS-Event-ID twice. Receivers deduplicate on
// it; nothing else makes a duplicate.
//
// The log is bounded: finished notifications (nothing pending) are
// deleted after Retention, and beyond the Keep newest finished ones.
//
// Callback URLs may carry credentials; the notifier reads them sealed
// from the registry and logs and records only their redacted form.
//
// The POSTs hold to the egress policy of the admission policy's default
// rules (pkg/egress: callbacks are the cluster's, not a namespace's): a
// callback on loopback, link-local or the control plane is refused on
// every attempt unless the default rules allow it. An attempt's error
// is its status or the refusal, never what the receiver answered.
//
// It must not import Mesos packages, the scheduler core or the API
// (pkg/scheduler, pkg/api): those make notifications and show them
// through the registry.
package notify
