#!/usr/bin/env bash
# Captures the views of autoscalers the golden tests render
# (testdata/views/autoscaler*.json) from a real bcs-scheduler --dev whose
# leader runs the autoscaler controller: the quick start's deployment
# sized by a buffer (a schedule window open all day), three of its
# instances allocated and one released again, so that it scaled up and
# down; the process application by a Prometheus metric its namespace may
# not reach (the size holds); an autoscaler not decided yet (an hour's
# interval); the deployment with its allocated instances. Run from the top of
# the repository after `make build examples DATA=…`, against that
# scheduler:
#
#	BCS_SERVER=http://127.0.0.1:28080 BCS_TOKEN=$(cat DATA/admin.token) pkg/bcsctl/testdata/capture-autoscalers.sh
set -euo pipefail
out=pkg/bcsctl/testdata/views
ctl() { bin/bcsctl "$@"; }
api() { curl -sf -H "Authorization: Bearer $BCS_TOKEN" "$BCS_SERVER$1"; }
state() { api "$1" | jq -r "$2"; }

ctl apply -f examples/deployment.json
ctl apply -f examples/process.json
until [ "$(state /v1/deployments/demo/fleet .status.counts.ready)" = 4 ]; do sleep 1; done
until [ "$(state /v1/apps/demo/gamesvr .status.state)" = Running ]; do sleep 1; done

jq '.spec.intervalSeconds = 5
  | .spec.behavior.scaleDown = {"stabilizationWindowSeconds": 10, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 5}]}
  | .spec.schedule += [{"name": "all-day", "start": "0 0 0 * * *", "end": "59 59 23 * * *", "maxReplicas": 8}]' \
	examples/autoscaler.json | ctl apply -f -
echo '{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "lobby", "namespace": "demo"},
 "spec": {"target": {"kind": "process", "name": "gamesvr"}, "minReplicas": 2, "maxReplicas": 12, "intervalSeconds": 5,
  "metrics": [{"type": "prometheus", "name": "players",
               "prometheus": {"address": "http://127.0.0.1:9", "query": "sum(players{app=\"gamesvr\"})"},
               "targetAverageValue": 40}]}}' | ctl apply -f -
echo '{"apiVersion": "v4", "kind": "autoscaler", "metadata": {"name": "arena", "namespace": "demo"},
 "spec": {"target": {"kind": "deployment", "name": "arena"}, "maxReplicas": 50, "intervalSeconds": 3600,
  "metrics": [{"type": "buffer", "buffer": {"bufferSize": "25%"}}]}}' | ctl apply -f -

# the buffer of 2 with none allocated: down to the minimum, one at a time
until [ "$(state /v1/autoscalers/demo/fleet .status.currentReplicas)" = 2 ]; do sleep 1; done
until [ "$(state /v1/deployments/demo/fleet .status.counts.running)" = 2 ]; do sleep 1; done
ctl instance allocate fleet/0 -n demo --note "match 7"
ctl instance allocate fleet/1 -n demo --note "match 8"
# 2 allocated + 2 free: up to 4, then a third allocated asks for 5
until [ "$(state /v1/deployments/demo/fleet .status.counts.ready)" = 4 ]; do sleep 1; done
ctl instance allocate fleet/2 -n demo
until [ "$(state /v1/deployments/demo/fleet .status.counts.ready)" = 5 ]; do sleep 1; done
# a match ends: one free instance too many, removed after the window
ctl instance release fleet/1 -n demo
until [ "$(state /v1/autoscalers/demo/fleet .status.lastScale.to)" = 4 ]; do sleep 1; done
sleep 6 # one more decision: the status says why it holds

api /v1/autoscalers/demo/fleet >$out/autoscaler-fleet.json
api '/v1/autoscalers?namespace=demo' >$out/autoscalers.json
api /v1/deployments/demo/fleet >$out/deployment-fleet-autoscaled.json
date -u +%Y-%m-%dT%H:%M:%SZ >$out/autoscalers-captured-at
