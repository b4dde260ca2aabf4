#!/bin/sh
# reload.sh PIDFILE: gamesvr reloads on SIGHUP.
kill -HUP "$(cat "$1")"
