// Package api is bcs-scheduler's REST JSON API: manifests in (applications,
// processes, deployments, configmaps, secrets, hook templates, depends
// objects), validated with every problem named by its field path, stored
// through pkg/registry, and state out.
//
// What it reads and answers are pkg/apiv1's types, which bcsctl decodes
// and GET /openapi.json describes (openapi.go); wire.go builds them from
// the registry's records.
//
// Errors have one shape,
//
//	{"error":{"code":"InvalidArgument","message":"…","details":["spec.instance: must be ≥ 0"]}}
//
// mapped from the errdefs classes in one place (errors.go). A write the
// store refused on its precondition is told in the API's terms — the
// object, its revision as GET shows it, what to do — and the store's key
// and op go to the log only; a request whose client went away is logged
// at debug level, never as an error. Workload
// manifests and commands are held to the admission policy
// (pkg/admission), with their namespace's own uid as the registry
// recorded it (a manifest may name it; another namespace's it may not). Operations the
// scheduler carries out later (delete, scale, and the rollout operations
// pause, resume, promote, abort, rollback and restart) answer 202 Accepted
// and their progress is read back with GET. Applications and processes are
// served at /v1/apps, deployments at /v1/deployments: the same records
// (workloads), each with its instances and its rollout (rollouts.go).
// Notify callbacks (seed 002's Notify Api) are at /v1/notifies and their
// delivery log at /v1/notifications (notify.go), callback URLs always
// redacted. Depends objects (depends.go) show their dependency pods; seed
// 002's Dependency API answers at /api/depends. Autoscalers
// (autoscalers.go, /v1/autoscalers) are validated with pkg/autoscale's
// Check too and shown with the status the leader last wrote; one
// workload has one autoscaler (409 naming the holder), and their web
// sources' headers are redacted as every manifest's. The engine's
// configuration (engineconfig.go; seed 002's /api/engine/config too) is
// Config.EngineDefaults, this replica's flags, with the values an admin
// set at run time over them (a JSON merge patch, kept in etcd). On a
// follower replica, writes are redirected to the leader with 307.
//
// POST /v1/plan and ?dryRun=true on create and update (plan.go) validate a
// manifest as the real request does and answer with what the leader's
// scheduler would do with it (pkg/plan), storing nothing; of an
// autoscaler, the decision Config.AutoscalePlanner says it would make.
// A new version of a workload an autoscaler scales keeps its size and
// holes (registry.UpdateApp; autoscaled.go): the update's answer says so
// in a Warning header (299, as Kubernetes warns kubectl), and its plan
// is made at the kept size with that warning first.
//
// GET /v1/events (events.go) streams every change of the kinds its table
// names as Server-Sent Events, read from the store's history through
// pkg/changefeed, so a client resumes from the last event ID it saw; each
// client's buffer is bounded. An event's revision is the etcd revision
// of its write (not an application's revision, its version), its time
// the one its record was written at. A caller gets the events GET would show it:
// each event is in the namespace of its object (a notification's is its
// instance's), or is the cluster's state.
//
// The reads of applications, their instance pages and the agents
// (reads.go) come from Config.View, a read view of the records fed by
// etcd's watch (registry.Viewed over pkg/readview), on the leader and on
// standbys alike, so dashboards polling a fleet do not read etcd nor
// decode its records again. Each read first waits, at most
// Config.ViewWait, for the view to reflect etcd's revision at that
// moment: a client reads its own writes, whichever replica took them.
// A view that does not catch up in time leaves the read to etcd
// (bcs_api_reads_total{from} counts both). Writes, and the answers of
// writes, read etcd.
//
// A read of a fleet does the work of what changed since the last: the
// agents' list joins each application's share of the agents (where its
// instances run, their resources and their instances encoded), which the
// view keeps until its task groups change (readview.View.EachDir), and
// the long lists of an answer (an agent's instances, an application's)
// are written by hand-made encoders into the answer encoded without them
// (writeJSONFilled), the encoder's bytes exactly, a chunk at a time.
// The agents' lists the view answered are kept, encoded, while its
// contents do not change (viewanswers.go), by the caller's scope (role
// and namespaces) and URL: clients polling the same fleet share one
// encoding, and a caller never gets an answer made for another scope.
// While the fleet changes, each agent's object but for its instances is
// kept by the records it was made of (agentObjects): an answer encodes
// again only the agents whose records or instance sums changed.
//
// A cluster-wide view names a namespace's objects only to callers who
// may read that namespace (mayRead): an agent's instances (agents.go)
// and a depends object's referencing applications of other namespaces
// are counted, not named.
//
// GET /v1/taskgroups/{id}/logs (logs.go) reads a task's stdout or stderr
// from its sandbox through its agent's files API (pkg/mesosfiles), the
// agent's address from its record, and with follow=true polls for more.
//
// Every route that takes a manifest reads it as its own kind first, before
// the caller is authorized: another kind is a 400 naming kind. HTTPServer
// bounds how long a request may take to arrive (Config.Timeouts): a client
// trickling one is answered 408 and cut.
//
// It must not import Mesos packages (pkg/mesosfiles speaks plain HTTP);
// it knows the scheduler only through the registry and the Leadership
// interface.
package api
