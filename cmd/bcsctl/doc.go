// Command bcsctl is the command line a person uses with bcs-scheduler:
// apply manifests, get and describe objects, follow and steer rollouts,
// drain agents, reach instances, watch events.
//
//	bcsctl apply -f examples/process.json
//	bcsctl get instances -n demo
//	bcsctl rollout status deployment fleet -n demo
//
// The API is --server, else $BCS_SERVER, else http://127.0.0.1:8080.
// Everything but reading the terminal lives in package bcsctl.
package main
