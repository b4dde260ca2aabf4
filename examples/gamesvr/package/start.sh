#!/bin/sh
# start.sh PORT PIDFILE: start gamesvr in the background and record its pid
# (the daemonising style the process executor checks with pidFile + procName).
set -e
mkdir -p "$(dirname "$2")"
# its output stays the task's (the sandbox's <task>.stdout: bcsctl logs)
nohup ./gamesvr -listen "127.0.0.1:$1" &
echo $! >"$2"
