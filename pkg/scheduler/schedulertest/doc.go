// Package schedulertest runs the scheduler core from scripts: a Harness
// feeds a scheduler.Core one command at a time against an in-memory store
// and fake agents and describes what the core persisted ("store …"), sent
// ("call …"), started ("check …") and logged ("log …"), in order. The
// scenario scripts in pkg/scheduler/testdata use it through
// github.com/cockroachdb/datadriven; other packages (the update controller,
// a benchmark) can drive the core the same way.
//
// Commands:
//
//	app NS/NAME instances=N [policy=P interval=S backoff=S maxtimes=N unique=NAME cluster=NAME:V1,V2 grace=S
//	    tolerate=KEY=VALUE[:EFFECT][@SECONDS] prefer=NAME:V1,V2@WEIGHT (a preferred CLUSTER item)
//	    depends=NAME[:namespace][,NS/NAME[:node]...] created=now]   created=now: the record's
//	                    creation time is the clock's, and its task IDs carry its incarnation
//	                    (without, the record has none and its IDs read namespace_app_index_launch)
//	container NS/NAME instances=N [cni=NETWORK sidecar=true remote=tcp,http policy=P ...]  the
//	                    fixture container application (sidecar: a second container, without
//	                    checks; remote: as apps', on the first container's port)
//	agents N            agents agent-1..N (hostname host-N, idc attribute)
//	subscribe           SUBSCRIBED
//	offers [AGENT ...] [ports=B-E] [cpus=C] [url=IP:PORT]  one full offer from every (or the named) agent
//	                    (url: the agent's address, as real offers carry it)
//	status NS/NAME IDX STATE [reason=R] [source=S] [task=K] [healthy=true|false] [launch=L]
//	unknown TASKID AGENT STATE [reason=R] [source=S]   a status for a task the core does not know
//	                    (or of a launch it no longer tracks)
//	tasks NS/NAME IDX   the stored record's tasks and their states (no step)
//	sweep AGENT KIND STATE [message=M]   a status of the sweep task running there
//	tick DURATION       advance the clock and send Tick
//	scale NS/NAME N [force=true] | delete NS/NAME | update NS/NAME (a new version, same spec)
//	operate NS/NAME IDX OP   restart, reload, reschedule, stop or start the current launch
//	stopapp|startapp NS/NAME   the operator stops or starts the application (App.Stopped)
//	health NS/NAME IDX healthy|unhealthy|kill [check=N addr=HOST:PORT]   a remote check's
//	                    verdict (addr: what the driver probed)
//	                    (apps take remote=tcp,http: a REMOTE_TCP and a REMOTE_HTTP check)
//	rescind OFFERID
//	restart [max-launching=N] [identities=on] [reconcile-batch=N]  a new Core restored
//	                    from the store, as after a crash (with Config.MaxLaunching N,
//	                    Config.Identities or Config.ReconcileBatch N from now on)
//	identity NS uid=N | identity NS problem=R   the driver got the namespace's identity
//	                    (launches then show "uid N"), or could not (NamespaceIdentity)
//	crash COMMAND       COMMAND's step stores and sends nothing (kill -9 before the
//	                    driver persisted it), then restart
//	object put|delete configmap|secret|depends NS/NAME [build=B]   write (the fixture under
//	                    that name; build changes a depends object's spec) or delete one
//	object unreadable secret NS/NAME reason=R   the driver cannot read the secret's values
//	                    (SecretUnreadable: its Vault is unreachable)
//	deploy NS/NAME [instances=N type=T maxUnavailable=X maxSurge=X partition=N inplace=S
//	       steps=partition:3,pause,pause:60 duration=S order=DeleteFirst manual=true paused=true
//	       build=B cpu=C ports=2 checks=http]   create a process deployment, or store its next version
//	pause|resume|promote|abort NS/NAME   the operator's rollout controls
//	rollback NS/NAME VERSION | restartapp NS/NAME   a new version: an older spec, or a restart
//	result NS/NAME IDX TYPE ok|ERROR...   the executor's answer to a message (update)
//	hookrun NS/RUN PHASE [MESSAGE...]   a hook run the core made ends (as the hook runner would end it)
//	daemonset NS/NAME [deploy's options but instances]   create a process daemonset, or
//	                    store its next version
//	listed AGENT ... [inactive=AGENT,...]   the master's agent list (AgentsListed)
//	plan app|deploy|daemonset NS/NAME [options]   what storing that manifest would do
//	                    (Core.Plan): "plan ACTION NS/NAME", then one line per instance
//	                    ("  INDEX ACTION [MODE] [AGENT(HOST)] rev=N [surge] [pending=…]"),
//	                    the summary and warnings; nothing is stored
//
// deploy also takes predelete=TEMPLATE [predeleteTimeout=S] and hook steps
// (steps=partition:2,hook:TEMPLATE).
//
// Dependency pods the core writes are stored as the registry would store
// them ("store dependency pod …") and the application change the store's
// watch would bring is stepped right after, its lines following.
//
// status also takes revision=N, the revision the executor reports in
// TaskStatus.data, ip=ADDR (empty for none), the container's address
// it reports there in a CNI network, and netip=ADDR, an address in
// TaskStatus.container_status.network_infos, as Mesos reports it. Rollouts are shown ("store rollout …") for
// deployments, and only when what is shown changed.
//
// It is test support: production code must not import it, and it must not
// import HTTP, storage or Mesos client packages.
package schedulertest
