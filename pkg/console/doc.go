// Package console is bcs-scheduler's web console, served at /ui/: the
// fleet's namespaces and workloads, an application's instances, a
// deployment's rollout, the agents, why an instance waits, an instance's
// last log lines and what a person does to it (restart, reload,
// reschedule, stop, start, exec), and the event stream, its recent history first.
//
// The server renders one shell page; small ES modules in static/ (no
// framework, no build step, embedded in the binary) read and write
// through the same REST API routes bcsctl uses and follow GET /v1/events
// to update the page in place (the events page replays it from a while
// back, as bcsctl events does). Long lists render only their visible rows
// and read the API a page at a time. A read-only caller (the shell's
// role) is shown no instance action; the API refuses it them anyway.
//
// The API wants a bearer token, which a browser cannot send on its own:
// /ui/login takes the token, checks it and keeps it in an HttpOnly,
// SameSite=Strict cookie (Secure over TLS), auth.SessionCookie; the API
// takes that cookie as the token, for a write only together with the
// header the console's scripts send (auth.ConsoleHeader). No page and no
// URL ever holds the token. Without an Authenticator (an API without
// authentication) nobody logs in.
//
// It must not import the store, the registry or any Mesos package: what
// it shows comes through the API.
package console
