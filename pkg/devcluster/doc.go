// Package devcluster is an embedded, Mesos-compatible development cluster:
// one master and any number of agents inside the calling process, speaking
// the real Mesos v1 HTTP APIs so that unchanged scheduler and executor
// binaries (and mesos-go's own clients) run against it as against Apache
// Mesos. It is a dev/test tool, not a Mesos replacement.
//
// It owns:
//   - the master's scheduler API, POST /api/v1/scheduler (SUBSCRIBE with a
//     RecordIO event stream in JSON or protobuf, HEARTBEAT, ACCEPT with
//     LAUNCH and LAUNCH_GROUP validated like Mesos, DECLINE filters, REVIVE,
//     SUPPRESS, KILL, SHUTDOWN, ACKNOWLEDGE, RECONCILE, MESSAGE, TEARDOWN,
//     UPDATE_FRAMEWORK, ACCEPT_INVERSE_OFFERS, DECLINE_INVERSE_OFFERS),
//     framework failover;
//   - the master's read-only views as a 1.12 master serves them (also
//     at the root: /state, /tasks, /frameworks): GET /master/state,
//     /master/frameworks (framework_id) and /master/tasks (framework_id,
//     task_id, limit 100 by default, offset, order asc or descending by
//     the first status's time), tasks and frameworks rendered once for
//     all three; like Mesos, a limit or offset it cannot read counts as
//     absent;
//   - the master's operator API, POST /api/v1 in JSON or protobuf:
//     GET_AGENTS, DRAIN_AGENT (the agent kills every task with its kill
//     policy capped, DRAINING turns DRAINED once the terminal updates are
//     acknowledged, or the agent is marked gone), DEACTIVATE_AGENT,
//     REACTIVATE_AGENT, and the maintenance primitives
//     (GET/UPDATE_MAINTENANCE_SCHEDULE, GET_MAINTENANCE_STATUS,
//     START/STOP_MAINTENANCE) with inverse offers to the frameworks using
//     an agent in a maintenance window; every agent's machine is its
//     hostname and 127.0.0.1;
//   - an allocator that keeps what each agent has left to offer as
//     offers, tasks and executors take and give back resources, and
//     offers each active agent's rest to one framework at a time, every
//     AllocationInterval and when a framework or agent changed, and the
//     agents that freed something when they did;
//   - agents, whose executors are either simulated (no processes; cheap
//     enough for thousands of agents) or real child processes leading
//     their own sessions in their sandboxes — when an executor ends, its
//     container is destroyed like Mesos' posix launcher does: every process
//     of its session is killed; setsid daemons and Docker containers
//     survive — served by the agent's own
//     POST /api/v1/executor endpoint on 127.0.0.1, with a status update
//     manager that resends updates until the scheduler acknowledges them;
//   - in process mode, surviving its own restart, kill -9 included, as a
//     Mesos master and agents restarted on their work dirs do
//     (registry.go, checkpoint.go, recover.go): the master keeps a
//     registry of its frameworks and agents (IDs, executor API
//     addresses), each agent a checkpoint of its containers (executors,
//     their tasks, launches not yet delivered, updates not yet
//     acknowledged, the session and start time of the process), all
//     under <WorkDir>/meta, written whole through a rename; a cluster
//     started again on the work dir serves nothing until it took them
//     back: frameworks disconnected until they subscribe again, executors
//     awaited as after RestartAgent, those that do not come back killed
//     with their sessions before the agent offers again, launches the
//     kill interrupted resumed; a recovered executor, no child of the new
//     process, is watched through a pidfd. Simulated mode keeps nothing;
//   - each agent's files API on the same address (files.go, like Mesos'
//     src/files/files.cpp): GET /files/read, /files/browse,
//     /files/download and /files/debug over the executor sandboxes,
//     attached as /frameworks/<fw>/executors/<executor>/runs/latest, as
//     <work dir>/…/runs/latest (a link, as on a Mesos agent) and as the
//     run directory itself, readable until SandboxGCDelay after the
//     executor ended;
//   - a Go API for tests: Start, MasterURL, Stop, AddAgent, RemoveAgent,
//     RestartAgent (agent recovery: executors of checkpointing frameworks
//     subscribe again and keep their tasks), KillExecutor, RestartMaster,
//     FailTask and FinishTask (simulated
//     mode), plus TaskState, State, Agents, Frameworks and AgentEndpoint
//     to look inside, and Stats to measure a scheduler (launches, status
//     updates, resends, acknowledgement latency).
//
// Timers that drive behaviour (heartbeats, allocation, refusal filters,
// status update retries, simulated start delay, grace periods, executor
// registration) are Config durations so tests run in milliseconds, all on
// the one Config.Clock, which also stamps statuses and filters.
//
// Wire types are mesos-go's generated v1 types. JSON is encoding/json over
// them, rewritten as a Mesos 1.12 master writes it: unset fields left out,
// master capabilities newer than mesos-go (QUOTA_V2) by name. Offers and
// the resources of launched tasks and executors carry allocation_info
// whether the framework is MULTI_ROLE or not, as in the recordings of a
// real master and agent in testdata/mesos-1.12, which a test compares the
// dev cluster with field by field. Everything binds to
// loopback only.
//
// Like a master and agents with LIBPROCESS_SSL_ENABLED, it can serve
// HTTPS only (Config.SSLCertFile); like a master with
// --authenticate_http_frameworks, --authenticate_http_readwrite and
// --authenticate_http_readonly and the basic authenticator, it can want
// HTTP Basic credentials of a Mesos credentials file in each realm,
// answering 401 with a Basic challenge, and hold a framework to its
// authenticated principal (auth.go).
//
// It has no ZooKeeper, no SASL or executor authentication, no reservations,
// volumes or quotas, and of the operator API only the calls above;
// operations other than LAUNCH and LAUNCH_GROUP are logged and ignored.
//
// Three types do the work: the master (master.go; its scheduler API in
// scheduler.go, accept.go and offers.go, its operator API in operator.go,
// maintenance.go and drain.go, /master/state in state.go, the views'
// routes and parameters in views.go), the allocator
// (allocator.go) and the agents (agent.go; executors in process.go and
// executorapi.go, the status update manager in updates.go, their
// checkpoints and recovery in checkpoint.go and recover.go). Cluster
// (cluster.go) is the Go API over them. The master's mutex guards its and
// its agents' records (one record of a task serves both); handlers only
// queue events while holding it, and process launches run outside it. The
// allocator has locks of its own, taken after the master's, one agent's at
// a time in a pass, and hands the master the offers of a pass to make.
//
// It must not import other bcs-mesos packages except pkg/errdefs (its
// tests and devclustertest decode with pkg/mesoswire, as any client of a
// 1.12 master must); no production package but pkg/schedulerd (for
// bcs-scheduler --dev) may import it.
package devcluster
