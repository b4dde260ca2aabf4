// Package egress owns the egress policy of everything bcs fetches on a
// tenant's behalf — hook web and Prometheus calls, notify callbacks,
// remote configmap items, package URIs — so that a namespace's hooks and
// manifests cannot use the scheduler or an executor as a proxy into the
// cluster's control plane or into another tenant's files.
//
// A policy (Policy, compiled from its wire form proto.Egress) refuses
// networks (loopback, link-local — cloud metadata —, unspecified) and the
// control plane's endpoints (the scheduler's API and debug address, the
// Mesos masters, the agents' port on every address, etcd's client and
// peer endpoints: ControlPlane), and lets through a namespace's allowed
// exceptions (the admission policy's "egress" list) and routes (the
// scheduler's public /files/). A network or an address in Allowed lifts a
// network's refusal; a control-plane endpoint's refusal is lifted only by
// an entry naming its host and port.
//
// Every connection is checked where it is made: the Dialer's Control sees
// the address actually connected to, after DNS resolution, so redirects,
// FTP data connections, happy-eyeballs fallbacks and DNS rebinding are all
// checked. The HTTP client (Policy.Client) takes no proxy from the
// environment and keeps no idle connections; its transport also checks
// each request's URL, redirects included, before it dials. Errors name the
// address and the rule, never a response body: "egress to 127.0.0.1:5051
// refused: loopback (egress policy of namespace nsa)".
//
// Set holds the policies of every namespace, built once when the
// scheduler starts: the scheduler core sends a namespace's wire form to
// the executors in proto.TaskSpec.Egress, the hook runner and the
// notifier hold their calls to the compiled ones.
//
// It must not import other bcs-mesos packages except proto and errdefs.
package egress
