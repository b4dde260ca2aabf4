#!/usr/bin/env bash
# verify.sh [API_URL]: check a bcs-mesos installation end to end. It submits
# the process example and the container example (examples/*.json) in the
# namespace bcs-verify, waits until both are Running, checks that each
# instance answers on its host port, deletes them and waits until they are
# gone. Exit status 0 means every step worked; otherwise it says which did
# not and shows the application's state.
#
# Needs curl and jq. Run it from the repository (it reads examples/), on a
# machine that reaches the API and the agents' host ports. The process
# example fetches ${scheduler_url}/files/gamesvr.tar.gz: build it into the
# scheduler's files directory first (make examples DATA=<data-dir>).
# The API wants a bearer token of an operator of bcs-verify or an admin:
# BCS_TOKEN (see the README's Authentication).
set -euo pipefail

API=${1:-http://127.0.0.1:8080}
API=${API%/}
NS=bcs-verify
TIMEOUT=${VERIFY_TIMEOUT:-180}
AUTH=(-H "Authorization: Bearer ${BCS_TOKEN:-}")
cd "$(dirname "$0")/../.."

fail() {
	echo "verify: FAIL: $*" >&2
	exit 1
}

for tool in curl jq; do
	command -v "$tool" >/dev/null || fail "$tool is not installed"
done
curl -sf "$API/healthz" >/dev/null || fail "no bcs-scheduler API answers at $API/healthz"

# submit FILE NAME: the example in namespace bcs-verify.
submit() {
	local status
	# One instance each: enough to prove the path on a cluster of any size.
	status=$(jq --arg ns "$NS" '.metadata.namespace = $ns | .spec.instance = 1' "examples/$1" |
		curl -s -o /tmp/bcs-verify.$$ -w '%{http_code}' -XPOST -H 'Content-Type: application/json' "${AUTH[@]}" "$API/v1/apps" -d @-)
	[ "$status" = 201 ] || fail "POST examples/$1: HTTP $status: $(cat /tmp/bcs-verify.$$)"
	rm -f /tmp/bcs-verify.$$
	echo "verify: submitted $NS/$2 (examples/$1)"
}

# running NAME: wait until the application is Running.
running() {
	local deadline=$((SECONDS + TIMEOUT)) app state=""
	while [ $SECONDS -lt $deadline ]; do
		app=$(curl -s "${AUTH[@]}" "$API/v1/apps/$NS/$1")
		state=$(jq -r .status.state <<<"$app")
		if [ "$state" = Running ]; then
			jq -r '.status.instances[] | "verify:   instance \(.id) \(.taskGroupID) on \(.host) (\(.hostIP)) ports \(.ports)"' <<<"$app"
			echo "verify: $NS/$1 is Running"
			return
		fi
		sleep 2
	done
	fail "$NS/$1 is not Running after ${TIMEOUT}s: $state $(jq -c '{message: .status.message, instances: [.status.instances[] | {id, state, message}]}' <<<"$app")"
}

# answers NAME WANT: every instance answers on its http host port.
answers() {
	local app host port body
	app=$(curl -s "${AUTH[@]}" "$API/v1/apps/$NS/$1")
	while read -r host port; do
		body=$(curl -s --max-time 5 "http://$host:$port/" || true)
		[[ $body == *"$2"* ]] || fail "$NS/$1 on $host:$port answered \"$body\", want \"$2\""
		echo "verify: $NS/$1 answers on $host:$port"
	done < <(jq -r '.status.instances[] | "\(.hostIP) \(.ports.http)"' <<<"$app")
}

# deleted NAME: delete and wait until it is gone.
deleted() {
	curl -sf -XDELETE "${AUTH[@]}" "$API/v1/apps/$NS/$1" >/dev/null || fail "DELETE $NS/$1"
	local deadline=$((SECONDS + TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" "$API/v1/apps/$NS/$1")" = 404 ]; then
			echo "verify: $NS/$1 deleted"
			return
		fi
		sleep 1
	done
	fail "$NS/$1 still there ${TIMEOUT}s after DELETE"
}

submit process.json gamesvr
submit application.json web
running gamesvr
running web
answers gamesvr "gamesvr instance"
answers web "hello from web"
deleted gamesvr
deleted web
echo "verify: OK: processes and containers run, answer and go away on this cluster"
