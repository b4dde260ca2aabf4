// Package admission owns the operator's admission policy: per namespace,
// which users a process or container may run as besides the namespace's
// own uid (root refused unless named, by name or uid; the uids other
// namespaces hold refused always: pkg/identity's rule), whether
// containers may be privileged, use the host's network, and which host
// paths they may mount, and where what is fetched on their behalf may go
// besides what the egress policy allows (pkg/egress); and, for the whole
// scheduler, the directories file:// packages may come from. The API
// checks every workload manifest (application, process, deployment,
// daemonset, depends) and command against it when it is submitted, and
// every command run in a task (a task group's exec: Exec, the same rule
// as a command's), and refuses what the policy does not allow with a 400
// naming the field and the rule.
//
// The policy is data read from a JSON or YAML file (LoadFile); Default
// and Dev are the built-in ones. It must not import HTTP, storage or
// Mesos code; only pkg/manifest, pkg/field, pkg/confine, pkg/dockerparam,
// pkg/identity, pkg/strictjson, pkg/egress (to check the egress entries)
// and pkg/errdefs.
package admission
