#!/usr/bin/env bash
# docker-compose.yml end to end, on images built here without any registry (docker/local-images.sh):
# a private engine, `up` with the lancedb and metrics profiles (Qdrant has no Debian package), every container
# healthy, then e2e/stack/compose-stack.stack-spec.ts through the ports published on 127.0.0.1 (README curl
# examples, a bundled skill's curl inside an agent container, a NATS restart under load, metrics), then `down -v`.
# Exit 0: passed; 1: failed; 3: no engine can start here (the reason is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
source docker/engine.sh
source docker/local-images.sh

log() { echo "compose-e2e: $*" >&2; }
why=$(engine_unavailable)
if [ -n "$why" ]; then log "SKIPPED: no Docker engine can start here: $why"; exit 3; fi

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

started_engine=0
PROJECT=alfred-e2e-$$
ENV_FILE=$(mktemp)
compose() { docker-compose --project-name "$PROJECT" --env-file "$ENV_FILE" -f "$REPO/docker-compose.yml" "$@"; }

cleanup() {
  local code=$?
  if [ "$code" != 0 ] && [ -n "${up:-}" ]; then
    log "failed; last log lines of every container:"; compose logs --no-color --tail 15 >&2 || true
  fi
  if [ -n "${up:-}" ]; then
    compose down -v --remove-orphans >/dev/null 2>&1 || log "compose down failed"
    left=$("$DOCKER_CLI" ps -aq --filter "label=com.docker.compose.project=$PROJECT"; "$DOCKER_CLI" volume ls -q --filter "label=com.docker.compose.project=$PROJECT")
    if [ -n "$left" ]; then log "down -v left containers or volumes behind: $left"; code=1; else log "down -v removed every container and volume"; fi
  fi
  [ "$started_engine" = 1 ] && engine_stop
  rm -rf "$ENV_FILE" "$HOST_APP"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 1' TERM INT

t0=$(date +%s)
if ! "$DOCKER_CLI" version >/dev/null 2>&1; then
  engine_start || { log "SKIPPED: dockerd would not start on this machine (its log is above)"; exit 3; }
  started_engine=1
fi
local_images_build || exit 1
log "images ready in $(( $(date +%s) - t0 )) s"

API_PORT=$(free_port); PROM_PORT=$(free_port)
API_KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$ENV_FILE" <<ENV
COMPOSE_PROFILES=lancedb,metrics
ALFRED_IMAGE=alfred:local
ALFRED_NATS_IMAGE=alfred-local/nats
ALFRED_NATS_CONF=./docker/nats/nats-2.9.conf
ALFRED_REDIS_IMAGE=alfred-local/redis
ALFRED_PROMETHEUS_IMAGE=alfred-local/prometheus
ALFRED_PUBLISH_PORT=$API_PORT
ALFRED_PROMETHEUS_PORT=$PROM_PORT
ALFRED_API_KEYS=$API_KEY=default
ALFRED_EMBEDDER=hash
ENV

t1=$(date +%s)
up=1
compose up -d --no-build --quiet-pull >/dev/null || { log "compose up failed"; exit 1; }
containers=$(compose ps -q)
log "$(echo "$containers" | wc -l) containers up; waiting for every health check"
for _ in $(seq 1 120); do
  states=$(for c in $containers; do "$DOCKER_CLI" inspect -f '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$c"; done)
  echo "$states" | grep -qvE ' (healthy|running)$' || break
  sleep 2
done
if echo "$states" | grep -vE ' (healthy|running)$' >&2; then log "not healthy after 240 s"; exit 1; fi
log "every container healthy in $(( $(date +%s) - t1 )) s"

export ALFRED_STACK_URL="http://127.0.0.1:$API_PORT" ALFRED_STACK_KEY="$API_KEY" ALFRED_STACK_PROMETHEUS="http://127.0.0.1:$PROM_PORT"
export ALFRED_STACK_COMPOSE="docker-compose --project-name $PROJECT --env-file $ENV_FILE -f $REPO/docker-compose.yml"
node --experimental-vm-modules node_modules/jest/bin/jest.js --config jest.stack.config.js || exit 1
log "passed in $(( $(date +%s) - t0 )) s"
