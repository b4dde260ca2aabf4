// Package testlog gives tests a *slog.Logger that writes through t.Log, so
// a component's log shows with the test that failed and nowhere else;
// Recorded also keeps it for the test to read (what was said, and what
// must never be).
//
// It is test support: production code must not import it, and it must not
// import other bcs-mesos packages.
package testlog
