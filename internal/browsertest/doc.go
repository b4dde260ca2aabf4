// Package browsertest drives a headless Chromium over the DevTools
// protocol for the web console's tests and benchmarks: it opens the
// browser, logs in, waits for what a page shows, clicks, saves
// screenshots for review, and counts what a page fetched (requests and
// bytes) and the errors it threw.
//
// It is test support: production code must not import it, and it must not
// import other bcs-mesos packages.
package browsertest
