// Package healthcheck runs the executor-side health checks of seed 000 and
// seed 001 (HTTP, TCP, COMMAND) for the process and container executors.
//
// It owns:
//   - probes: HTTP GET scheme://host:port/path with headers (status
//     200–399 is healthy, https without certificate verification,
//     redirects not followed), TCP connect, and COMMAND through an
//     injected ExecFunc (a shell for processes, docker exec for
//     containers; Shell is the former);
//   - port resolution: a number, or a portName looked up by a PortResolver
//     the runtime supplies (PortByName implements seed 000's rule: BRIDGE
//     uses hostPort when > 0, else containerPort; other modes
//     containerPort);
//   - the verdict (Tracker, a pure state machine): failures are ignored
//     until the task was healthy once or gracePeriodSeconds are over;
//     after consecutiveFailures failures in a row the verdict is Kill (0
//     means never kill);
//   - the schedule (Checker.Run): delaySeconds, then a probe every
//     intervalSeconds bounded by timeoutSeconds, on an injected Clock.
//
// It must not import other bcs-mesos packages except proto and errdefs,
// nor any Mesos or Docker client: the runtime decides what a Kill verdict
// does and how Healthy reaches the scheduler.
package healthcheck
