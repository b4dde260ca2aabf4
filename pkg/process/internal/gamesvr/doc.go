// Command gamesvr is the tiny game server of the process executor's tests:
// the seed 000 example's package ships it next to start.sh, stop.sh and
// reload.sh. It serves GET /check (200) and / on -addr, counts SIGHUP
// reloads, exits 0 on SIGTERM, and with -daemon re-executes itself in the
// background and writes -pidfile.
//
// Test-only; nothing may import it.
package main
