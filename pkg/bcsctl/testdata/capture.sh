#!/usr/bin/env bash
# Captures the API views the golden tests render (testdata/views/*.json)
# from a real bcs-scheduler --dev: a fleet mid-canary, a process
# application, a container application, an instance that cannot be
# placed, configmaps, secrets, a hook template and run, a depends object,
# a cordoned agent, a daemonset (off the cordoned agent), plans. Run from the top of the repository after
# `make build examples`, holding the e2e lock (fixed ports 8080 and 5050):
#
#	flock /tmp/bcs-e2e.lock pkg/bcsctl/testdata/capture.sh
set -euo pipefail
out=pkg/bcsctl/testdata/views
data=$(mktemp -d)
chmod 755 "$data"
mkdir -p "$data/files"
cp bcs-data/files/*.tar.gz "$data/files/"
bin/bcs-scheduler --dev --data-dir "$data" --work-base-dir "$data/work" --run-base-dir "$data/run" \
	--container-executor-arg=--network-image=bcs-test/busybox:latest \
	'--container-executor-arg=--network-command=sleep 2147483647' >"$data/scheduler.log" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid; rm -rf "$data"' EXIT
api=http://127.0.0.1:8080
until curl -sf $api/healthz >/dev/null; do sleep 0.5; done
post() { curl -sf -XPOST -H 'Content-Type: application/json' "$api$1" -d @- >/dev/null; }
put() { curl -sf -XPUT -H 'Content-Type: application/json' "$api$1" -d @- >/dev/null; }
state() { curl -s "$api$1" | jq -r "$2"; }

post /v1/apps <examples/process.json
post /v1/deployments <examples/deployment.json
post /v1/apps <examples/application.json
# four instances, one per hostname, on three agents: one stays pending
jq '.metadata.name = "crowded" | .spec.instance = 4' examples/process.json | post /v1/apps
jq '.metadata.namespace = "demo"' pkg/manifest/testdata/configmap.json | post /v1/configmaps
jq '.metadata.namespace = "demo"' pkg/manifest/testdata/secret.json | post /v1/secrets
post /v1/depends <examples/depends.json
post /v1/daemonsets <examples/daemonset.json
echo '{"apiVersion":"v4","kind":"hooktemplate","metadata":{"name":"age","namespace":"demo"},
 "spec":{"args":[{"name":"AppName"}],"metrics":[{"name":"web","successCondition":"asInt(result) < 30",
 "provider":{"web":{"url":"http://127.0.0.1:9/age?app={{ args.AppName }}","jsonPath":"{$.age}","timeoutSeconds":1}}}]}}' | post /v1/hooktemplates
echo '{"kind":"hookrun","metadata":{"name":"age-by-hand","namespace":"demo"},"spec":{"templateName":"age","args":[{"name":"AppName","value":"fleet"}]}}' | post /v1/hookruns
echo '{"callback":"http://127.0.0.1:9/bcs?token=abc","events":["exit","flapping"]}' | post /v1/notifies

until [ "$(state /v1/deployments/demo/fleet .status.rollout.phase)" = Completed ]; do sleep 1; done
until [ "$(state /v1/apps/demo/gamesvr .status.state)" = Running ]; do sleep 1; done
until [ "$(state /v1/apps/demo/web .status.state)" = Running ]; do sleep 1; done
# the canary: instances 2 and 3 get BUILD=v2, then the rollout waits for promote
jq '.spec.updateStrategy.canary = {"steps": [{"partition": 2}, {"pause": {}}]} | .spec.template.spec.processes[0].env[1].value = "v2"' examples/deployment.json | put /v1/deployments/demo/fleet
until [ "$(state /v1/deployments/demo/fleet '.status.rollout.phase')" = Paused ]; do sleep 1; done
curl -sf -XPOST -H 'Content-Type: application/json' $api/v1/agents/agent-3/cordon -d '{"reason":"disk check"}' >/dev/null
sleep 12 # the hook run errs its way to the end; the pending instance is evaluated again

curl -sf "$api/v1/apps" >$out/apps.json
curl -sf "$api/v1/deployments" >$out/deployments.json
curl -sf "$api/v1/deployments/demo/fleet" >$out/deployment-fleet.json
curl -sf "$api/v1/daemonsets" >$out/daemonsets.json
curl -sf "$api/v1/daemonsets/demo/logagent" >$out/daemonset-logagent.json
curl -sf "$api/v1/apps/demo/crowded" >$out/app-crowded.json
curl -sf "$api/v1/apps/demo/web" >$out/app-web.json
curl -sf "$api/v1/deployments/demo/fleet/versions" >$out/versions-fleet.json
curl -sf "$api/v1/agents" >$out/agents.json
curl -sf "$api/v1/agents/agent-3" >$out/agent-3.json
curl -sf "$api/v1/hookruns" >$out/hookruns.json
curl -sf "$api/v1/hookruns/demo/age-by-hand" >$out/hookrun-age-by-hand.json
curl -sf "$api/v1/configmaps" >$out/configmaps.json
curl -sf "$api/v1/secrets" >$out/secrets.json
curl -sf "$api/v1/hooktemplates" >$out/hooktemplates.json
curl -sf "$api/v1/depends" >$out/depends.json
curl -sf "$api/v1/notifies" >$out/notifies.json
curl -sf "$api/v1/notifications" >$out/notifications.json
# plans: one more crowded instance (it would find no agent), the fleet in place
jq '.metadata.name = "crowded" | .spec.instance = 5' examples/process.json |
	curl -sf -XPOST -H 'Content-Type: application/json' "$api/v1/plan" -d @- >$out/plan-crowded.json
jq '.spec.updateStrategy.type = "InplaceUpdate" | .spec.template.spec.processes[0].env[1].value = "v3"' examples/deployment.json |
	curl -sf -XPOST -H 'Content-Type: application/json' "$api/v1/plan" -d @- >$out/plan-fleet.json
# the fleet's history as the event stream tells it
curl -sN --max-time 3 "$api/v1/events?namespace=demo&lastEventId=0" >$out/events-demo.txt || true
date -u +%Y-%m-%dT%H:%M:%SZ >$out/captured-at
cp $out/captured-at $out/daemonset-captured-at
