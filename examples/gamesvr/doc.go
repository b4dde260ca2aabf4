// Command gamesvr is the example game server of the quick start: an HTTP
// server that answers / and /check, counts SIGHUP reloads and reports them
// at /status. make packages it with start.sh, stop.sh and reload.sh into
// gamesvr.tar.gz for the process example.
package main
