#!/bin/sh
# stop.sh PIDFILE: ask gamesvr to stop.
[ -f "$1" ] && kill -TERM "$(cat "$1")"
