#!/usr/bin/env bash
# docker-compose.yml end to end, on images built here without any registry (docker/local-images.sh):
# a private engine (shared with any other run using it, see docker/engine.sh), `up` with the lancedb and metrics
# profiles (Qdrant has no Debian package), every container healthy, then e2e/stack/compose-stack.stack-spec.ts through
# the ports published on 127.0.0.1 (README curl examples, a skill and an agent's bash turn inside the sandboxed
# containers, a NATS restart under load, every Prometheus target up, the image's size), then `down -v`; and the
# testcontainers path of `npm test` (libs/testing/src/test-containers.int-spec.ts) on the same engine.
# Exit 0: passed; 1: failed; 3: no engine can start here (the reason is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
source docker/engine.sh
source docker/local-images.sh

log() { echo "compose-e2e: $*" >&2; }
why=$(engine_unavailable)
if [ -n "$why" ] && ! engine_answers; then log "SKIPPED: no Docker engine can start here: $why"; exit 3; fi

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

acquired=0
PROJECT=alfred-e2e-$$
ENV_FILE=$(mktemp)
COMPOSE_FILES=(-f "$REPO/docker-compose.yml" -f "$REPO/e2e/stack/docker-compose.stack.yml")
compose() { docker-compose --project-name "$PROJECT" --env-file "$ENV_FILE" "${COMPOSE_FILES[@]}" "$@"; }
by_project() { echo "label=com.docker.compose.project=$PROJECT"; }

# `down -v`, and what it left. dockerd 20.10 can lose count of a network's endpoints when many containers stop at
# once ("has active endpoints" with none attached): that is the engine's bookkeeping, not the compose file's, so it
# is reported and the project's volumes are removed directly; anything else `down` fails on fails the run.
compose_down() {
  local out
  if ! out=$(compose down -v --remove-orphans 2>&1); then
    local others; others=$(echo "$out" | grep -v 'has active endpoints' | grep -i error)
    if echo "$out" | grep -q 'has active endpoints' && [ -z "$others" ]; then
      log "engine kept the project network (dockerd lost count of its endpoints); removing the volumes directly"
      "$DOCKER_CLI" volume rm $("$DOCKER_CLI" volume ls -q --filter "$(by_project)") >/dev/null 2>&1
    else
      log "compose down failed: $out"; return 1
    fi
  fi
  local left
  left=$("$DOCKER_CLI" ps -aq --filter "$(by_project)"; "$DOCKER_CLI" volume ls -q --filter "$(by_project)")
  if [ -n "$left" ]; then log "down -v left containers or volumes behind: $left"; return 1; fi
  log "down -v removed every container and volume"
}

cleanup() {
  local code=$?
  if [ "$code" != 0 ] && [ -n "${up:-}" ]; then
    log "failed; last log lines of every container:"; compose logs --no-color --tail 15 >&2 || true
  fi
  if [ -n "${up:-}" ]; then compose_down || code=1; fi
  [ "$acquired" = 1 ] && engine_release
  rm -rf "$ENV_FILE" "$HOST_APP"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 1' TERM INT

t0=$(date +%s)
engine_acquire || { log "SKIPPED: dockerd would not start on this machine (its log is above)"; exit 3; }
acquired=1
local_images_build || exit 1
log "images ready in $(( $(date +%s) - t0 )) s"
image_bytes=$("$DOCKER_CLI" image inspect alfred:local --format '{{.Size}}')
log "alfred:local is $(( image_bytes / 1000000 )) MB"

API_PORT=$(free_port); PROM_PORT=$(free_port)
API_KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# The agents' model: the Messages API stand-in the stack test starts inside each agent-runtime container, on its own
# loopback (e2e/stack/model-stand-in.ts, e2e/stack/docker-compose.stack.yml).
MODEL_PORT=18095
MODEL_KEY=sk-ant-stack-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$ENV_FILE" <<ENV
COMPOSE_PROFILES=lancedb,metrics
ALFRED_IMAGE=alfred:local
ALFRED_REGISTRY_IMAGE=alfred-registry:local
ALFRED_NATS_IMAGE=alfred-local/nats
ALFRED_NATS_CONF=./docker/nats/nats-2.9.conf
ALFRED_REDIS_IMAGE=alfred-local/redis
ALFRED_REDIS_EXPORTER_IMAGE=alfred-local/redis-exporter
ALFRED_PROMETHEUS_IMAGE=alfred-local/prometheus
ALFRED_PUBLISH_PORT=$API_PORT
ALFRED_PROMETHEUS_PORT=$PROM_PORT
ALFRED_API_KEYS=$API_KEY=default
ALFRED_EMBEDDER=hash
ALFRED_STACK_MODEL_KEY=$MODEL_KEY
ALFRED_STACK_MODEL_PORT=$MODEL_PORT
ENV

t1=$(date +%s)
up=1
compose up -d --no-build --quiet-pull >/dev/null || { log "compose up failed"; exit 1; }
containers=$(compose ps -q)
log "$(echo "$containers" | wc -l) containers up; waiting for every health check"
for _ in $(seq 1 150); do
  states=$(for c in $containers; do "$DOCKER_CLI" inspect -f '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$c"; done)
  echo "$states" | grep -qvE ' (healthy|running)$' || break
  sleep 2
done
if echo "$states" | grep -vE ' (healthy|running)$' >&2; then log "not healthy after 300 s"; exit 1; fi
log "every container healthy in $(( $(date +%s) - t1 )) s"

export ALFRED_STACK_URL="http://127.0.0.1:$API_PORT" ALFRED_STACK_KEY="$API_KEY"
export ALFRED_STACK_PROMETHEUS="http://127.0.0.1:$PROM_PORT"
export ALFRED_STACK_COMPOSE="docker-compose --project-name $PROJECT --env-file $ENV_FILE ${COMPOSE_FILES[*]}"
export ALFRED_STACK_IMAGE_BYTES="$image_bytes" ALFRED_STACK_MODEL_PORT="$MODEL_PORT" ALFRED_STACK_MODEL_KEY="$MODEL_KEY"
export ALFRED_STACK_DOCKER="$DOCKER_CLI"
node_modules/.bin/node --experimental-vm-modules node_modules/jest/bin/jest.js --config jest.stack.config.js || exit 1
log "stack passed in $(( $(date +%s) - t0 )) s"

# npm test's testcontainers path on this engine: the official images where a registry answers, else the ones built
# above (and Qdrant, which Debian does not package, skipped with the reason).
ALFRED_TEST_REQUIRE_ENGINE=true node_modules/.bin/node --experimental-vm-modules node_modules/jest/bin/jest.js \
  libs/testing/src/test-containers.int-spec.ts --selectProjects int || exit 1
log "passed in $(( $(date +%s) - t0 )) s"
