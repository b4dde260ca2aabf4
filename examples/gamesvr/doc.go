// Command gamesvr is the example game server of the quick start: an HTTP
// server that answers / and /check, counts SIGHUP reloads and reports them
// at /status, and shows at /version what an update changed (the package's
// VERSION file, the BUILD variable, the pid). make packages it with start.sh, stop.sh and reload.sh into
// gamesvr.tar.gz for the process example.
package main
