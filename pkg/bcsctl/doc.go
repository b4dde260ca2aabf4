// Package bcsctl is the command line a person uses with bcs-scheduler, in
// kubectl's habits: apply manifests (JSON or YAML), get objects as
// aligned tables, describe them (spec summary, instances, rollout, why an
// instance is pending, recent events), scale, follow and steer rollouts,
// drain agents, reach instances (exec, signal, logs), plan a change, see
// autoscalers' decisions (autoscalers.go), read
// and change the engine's configuration, and watch the event stream.
//
// The caller's token is --token, else $BCS_TOKEN, else the one `make run`
// wrote in bcs-data/admin.token, looked for in the working directory and
// each one above it (token.go); a 401 says which was sent, or each file
// looked at. A command that changes something prints a line saying what
// it did, or with -o json|yaml the API's answer (writeOutput).
//
// It knows the scheduler only through its REST API (client.go): it
// decodes the API's own types (pkg/apiv1, which the server answers
// with), and -o json|yaml prints what the server sent, unchanged. Tables
// and descriptions are pure functions of the views and a clock
// (table.go, describe.go), so golden files check them; commands (cmd.go and the files named after
// them) fetch, render and set the exit code.
//
// It must not import the server's packages (pkg/api, pkg/registry,
// pkg/store, pkg/scheduler); of bcs-mesos it uses only pkg/apiv1, the
// API's types, and pkg/manifest, pkg/constraint and pkg/strictjson, to
// read manifests as the server will (broken JSON refused saying line and
// column, as the server would) and summarise specs.
package bcsctl
