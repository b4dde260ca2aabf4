// Package manifest owns the bcs manifests users submit: their typed Go
// form, their defaults, their validation and the per-instance expansion of
// their variables (seed 000; examples in testdata/, copied from the original
// bk-bcs manifest references).
//
// Kinds: application (containers), deployment (an application template
// rolled out by strategy), daemonset (a deployment's template with no
// count: one instance on every agent its constraint admits), process
// (bare processes), configmap, secret,
// service, command, hooktemplate, depends (a pod template deployed
// next to the instances that name it in spec.template.spec.depends) and
// autoscaler (sizes a workload from its metrics; pkg/autoscale decides).
// The four kinds that run instances share their top-level fields
// (apiVersion, kind, metadata, restartPolicy, killPolicy, constraint)
// through the embedded WorkloadHeader. Parse decodes one manifest strictly (see
// pkg/strictjson): an unknown or misspelt field is an error naming its path;
// the few spelling variants the reference files contain ("KeyOrPath",
// "networktype", "IntersectionItem", "UnionData", "maxUnavilable") are
// accepted through alias tags. Parse applies the documented defaults; an
// Object's Validate reports every problem as "field path: message".
//
// Names. Seed 000 asks for names and namespaces of "lowercase letters and
// digits, not all digits, not starting with a digit", yet its own examples
// use '-' ("ri-test-rc-001", "ns-a") and its default namespace is
// "defaultGroup". The rule enforced: a DNS label, [a-z0-9-], starting with a
// letter, ending with a letter or digit, at most 63 characters; the
// namespace may also be exactly "defaultGroup". Configmaps and secrets are
// named as the original allowed (its manifests reference "mySecret"):
// letters of either case, digits, '.', '_' and '-', starting with a letter
// or digit, kept as written; their names never become a host or DNS name.
//
// Variables. A stored spec is never changed: ExpandProcess and
// ExpandContainer return deep copies with ${...} references replaced for
// one instance. Processes may use ${namespace}, ${processname},
// ${instanceid}, ${hostip}, ${ports.<name>}, ${work_base_dir},
// ${run_base_dir}, ${workPath}, ${pidFile} and ${scheduler_url} (the
// scheduler API's address, where agents fetch what it serves under
// /files/) in every string of a process
// definition; containers may use ${bcs.namespace}, ${bcs.appname},
// ${bcs.instanceid}, ${bcs.hostip}, ${bcs.ports.<name>},
// ${bcs.taskgroupid} and ${bcs.taskgroupname} in env values, and the
// container executor's ExecutorVariables and ${PORT_<name>} of the
// container's ports, which are left for the executor to replace at
// launch. Any other ${...} is an error naming the variables known there;
// a '$' not followed by '{' is left alone.
//
// Credentials. A manifest's passwords (CredentialFields) and the header
// values of its HTTP checks and hook web metrics (CredentialMaps) are
// shown Redacted (RedactCredentials, RedactHookMetrics for a hook run's
// copy); a manifest sent back with them Redacted keeps the stored ones
// (KeepCredentials) only where each is sent to the same place as before:
// a package's, remote item's or hook call's scheme, host and port (as
// written, when an argument or variable names them), an image's
// registry, a check's scheme and port, a hook header's name.
//
// The package is pure data: it must not import HTTP, storage (etcd) or
// Mesos code, and no bcs-mesos package but field, errdefs, constraint,
// strictjson, dockerparam and confine (a container's docker parameters
// and a process's paths are read by the executors' own rules, so that
// what they would refuse is refused here).
package manifest
