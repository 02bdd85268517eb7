#!/usr/bin/env bash
# A private Docker engine for local runs and CI: its own socket, state and bridge, so it neither needs
# nor disturbs a system dockerd. Source it, then `engine_start` / `engine_stop` (by the PID it started).
# Needs root and Debian's docker.io (dockerd 20.10); docker-compose 1.29 talks to it through DOCKER_HOST.

ENGINE_ROOT=${ALFRED_ENGINE_ROOT:-/var/lib/alfred-docker}
ENGINE_RUN=${ALFRED_ENGINE_RUN:-/run/alfred-docker}
ENGINE_BRIDGE=alfred-br0
ENGINE_BIP=${ALFRED_ENGINE_BIP:-10.213.0.1/24}
ENGINE_POOL=${ALFRED_ENGINE_POOL:-10.214.0.0/16}
export DOCKER_HOST="unix://$ENGINE_RUN/docker.sock"
# The CLI that speaks to dockerd 20.10 with BuildKit built in (a newer CLI elsewhere on PATH wants buildx).
export DOCKER_CLI=${DOCKER_CLI:-/usr/bin/docker}
export DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1

engine_log() { echo "engine: $*" >&2; }

# Why the engine cannot start here, or nothing when it can.
engine_unavailable() {
  [ "$(id -u)" = 0 ] || { echo "not root (dockerd needs root)"; return; }
  command -v dockerd >/dev/null || { echo "dockerd is not installed (apt-get install docker.io docker-compose)"; return; }
  command -v docker-compose >/dev/null || { echo "docker-compose is not installed (apt-get install docker-compose)"; return; }
  [ -x "$DOCKER_CLI" ] || { echo "$DOCKER_CLI is missing (Debian's docker.io provides it)"; return; }
}

engine_start() {
  local why; why=$(engine_unavailable)
  [ -z "$why" ] || { engine_log "cannot start: $why"; return 1; }
  mkdir -p "$ENGINE_ROOT" "$ENGINE_RUN"
  if ! ip link show "$ENGINE_BRIDGE" >/dev/null 2>&1; then
    ip link add "$ENGINE_BRIDGE" type bridge && ip addr add "$ENGINE_BIP" dev "$ENGINE_BRIDGE" && ip link set "$ENGINE_BRIDGE" up
  fi
  local mtu; mtu=$(ip -o link show "$(ip route show default | awk '{print $5; exit}')" 2>/dev/null | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
  dockerd --data-root "$ENGINE_ROOT" --exec-root "$ENGINE_RUN/exec" --pidfile "$ENGINE_RUN/dockerd.pid" \
    -H "$DOCKER_HOST" --bridge "$ENGINE_BRIDGE" --default-address-pool "base=$ENGINE_POOL,size=24" \
    --containerd-namespace alfred --containerd-plugins-namespace alfred-plugins ${mtu:+--mtu "$mtu"} \
    >"$ENGINE_RUN/dockerd.log" 2>&1 &
  ENGINE_PID=$!
  echo "$ENGINE_PID" >"$ENGINE_RUN/owner.pid"
  for _ in $(seq 1 150); do
    "$DOCKER_CLI" version >/dev/null 2>&1 && { engine_log "dockerd $ENGINE_PID up on $DOCKER_HOST"; return 0; }
    kill -0 "$ENGINE_PID" 2>/dev/null || break
    sleep 0.2
  done
  engine_log "dockerd did not come up; its log:"; tail -20 "$ENGINE_RUN/dockerd.log" >&2
  engine_stop; return 1
}

engine_stop() {
  local pid=${ENGINE_PID:-$(cat "$ENGINE_RUN/owner.pid" 2>/dev/null)}
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$ENGINE_RUN/owner.pid"; ENGINE_PID=
  ip link show "$ENGINE_BRIDGE" >/dev/null 2>&1 && ip link del "$ENGINE_BRIDGE"
  engine_log "dockerd $pid stopped"
}
