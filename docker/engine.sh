#!/usr/bin/env bash
# A private Docker engine for local runs and CI: its own socket, state, bridge and address ranges, so it neither
# needs nor disturbs a system dockerd, nor another private engine on the same machine. Source it, then
#   engine_acquire / engine_release   use the engine at $ENGINE_RUN, starting it if it is not running; the last
#                                     user to release an engine this script started stops it (by its PID)
#   engine_start / engine_stop        start or stop it outright
# Needs root and Debian's docker.io (dockerd 20.10); docker-compose 1.29 talks to it through DOCKER_HOST.
#
# Engines with different ALFRED_ENGINE_RUN (and ALFRED_ENGINE_ROOT) run side by side: each claims a free slot n
# under /run/alfred-engine-slots, which gives it the bridge alfred-br<n>, the bridge address 10.213.<n>.1/24 and the
# pool 10.<214+n>.0.0/16 for compose networks, and deletes on stop only the bridge it created. ALFRED_ENGINE_BRIDGE,
# ALFRED_ENGINE_BIP and ALFRED_ENGINE_POOL pin them instead.

ENGINE_ROOT=${ALFRED_ENGINE_ROOT:-/var/lib/alfred-docker}
ENGINE_RUN=${ALFRED_ENGINE_RUN:-/run/alfred-docker}
ENGINE_SLOTS=${ALFRED_ENGINE_SLOTS:-/run/alfred-engine-slots}
export DOCKER_HOST="unix://$ENGINE_RUN/docker.sock"
# The CLI that speaks to dockerd 20.10 with BuildKit built in (a newer CLI elsewhere on PATH wants buildx).
export DOCKER_CLI=${DOCKER_CLI:-/usr/bin/docker}
export DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1

engine_log() { echo "engine: $*" >&2; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# Why the engine cannot start here, or nothing when it can.
engine_unavailable() {
  [ "$(id -u)" = 0 ] || { echo "not root (dockerd needs root)"; return; }
  command -v dockerd >/dev/null || { echo "dockerd is not installed (apt-get install docker.io docker-compose)"; return; }
  command -v docker-compose >/dev/null || { echo "docker-compose is not installed (apt-get install docker-compose)"; return; }
  command -v flock >/dev/null || { echo "flock is missing (util-linux)"; return; }
  [ -x "$DOCKER_CLI" ] || { echo "$DOCKER_CLI is missing (Debian's docker.io provides it)"; return; }
}

engine_answers() { "$DOCKER_CLI" version >/dev/null 2>&1; }

# Runs "$@" holding the lock named $1 (a file), so concurrent scripts on this machine take turns.
locked() {
  local lock=$1; shift
  mkdir -p "$(dirname "$lock")"
  (
    flock -w 120 9 || { engine_log "could not take $lock in 120 s"; exit 1; }
    "$@"
  ) 9>"$lock"
}

# Picks this engine's bridge and ranges: pinned ones, or the first slot no live engine holds whose bridge and
# ranges nothing else uses. Writes ENGINE_RUN/network (bridge bip pool slot created).
claim_network() {
  if [ -n "${ALFRED_ENGINE_BRIDGE:-}" ]; then
    local pinned="${ALFRED_ENGINE_BIP:-10.213.0.1/24} ${ALFRED_ENGINE_POOL:-10.214.0.0/16}"
    echo "$ALFRED_ENGINE_BRIDGE $pinned - 0" >"$ENGINE_RUN/network"
    return 0
  fi
  mkdir -p "$ENGINE_SLOTS"
  local n owner bridge
  for n in $(seq 0 15); do
    owner=$(cat "$ENGINE_SLOTS/$n" 2>/dev/null)
    # A slot is held by the engine that wrote its run folder there while that engine's claimant or dockerd lives.
    if [ -n "$owner" ] && [ "$owner" != "$ENGINE_RUN" ]; then
      alive "$(cat "$owner/owner.pid" 2>/dev/null)" || alive "$(cat "$owner/claimant.pid" 2>/dev/null)" && continue
    fi
    bridge=alfred-br$n
    # A running dockerd on this bridge (one started by an older copy of this script, say) keeps it.
    if ps -eo args= | grep -E '^(/usr/s?bin/)?dockerd ' | grep -q -- "--bridge $bridge "; then continue; fi
    # Ranges routed through anything but this slot's own bridge belong to someone else.
    if ip -4 route show | grep -v " dev $bridge " | grep -qE "^10\.213\.$n\.|^10\.$((214 + n))\."; then continue; fi
    # A bridge already there is one a stopped engine left (no running dockerd uses it): this engine takes it over.
    if ! ip link show "$bridge" >/dev/null 2>&1; then
      { ip link add "$bridge" type bridge && ip addr add "10.213.$n.1/24" dev "$bridge" && ip link set "$bridge" up; } \
        || return 1
    fi
    echo "$ENGINE_RUN" >"$ENGINE_SLOTS/$n"
    echo "$bridge 10.213.$n.1/24 10.$((214 + n)).0.0/16 $n 1" >"$ENGINE_RUN/network"
    return 0
  done
  engine_log "no free engine slot under $ENGINE_SLOTS (16 engines running?)"
  return 1
}

engine_start() {
  local why; why=$(engine_unavailable)
  [ -z "$why" ] || { engine_log "cannot start: $why"; return 1; }
  mkdir -p "$ENGINE_ROOT" "$ENGINE_RUN"
  echo $$ >"$ENGINE_RUN/claimant.pid"
  locked "$ENGINE_SLOTS.lock" claim_network || { rm -f "$ENGINE_RUN/claimant.pid"; return 1; }
  local bridge bip pool _
  read -r bridge bip pool _ <"$ENGINE_RUN/network"
  local mtu; mtu=$(ip -o link show "$(ip route show default | awk '{print $5; exit}')" 2>/dev/null | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
  dockerd --data-root "$ENGINE_ROOT" --exec-root "$ENGINE_RUN/exec" --pidfile "$ENGINE_RUN/dockerd.pid" \
    -H "$DOCKER_HOST" --bridge "$bridge" --default-address-pool "base=$pool,size=24" \
    --containerd-namespace alfred --containerd-plugins-namespace alfred-plugins ${mtu:+--mtu "$mtu"} \
    >"$ENGINE_RUN/dockerd.log" 2>&1 9>&- &
  ENGINE_PID=$!
  echo "$ENGINE_PID" >"$ENGINE_RUN/owner.pid"
  rm -f "$ENGINE_RUN/claimant.pid"
  for _ in $(seq 1 150); do
    if engine_answers; then
      engine_log "dockerd $ENGINE_PID up on $DOCKER_HOST (bridge $bridge, $bip, pool $pool)"; return 0
    fi
    alive "$ENGINE_PID" || break
    sleep 0.2
  done
  engine_log "dockerd did not come up; its log:"; tail -20 "$ENGINE_RUN/dockerd.log" >&2
  engine_stop; return 1
}

# The host bridges of the engine's own networks (compose projects' and others): dockerd leaves them, and their
# routes, behind when it stops, where they would hold address ranges a later engine could use.
network_bridges() {
  engine_answers || return 0
  local own id name
  own=$(cut -d' ' -f1 "$ENGINE_RUN/network" 2>/dev/null)
  for id in $("$DOCKER_CLI" network ls -q --filter driver=bridge); do
    name=$("$DOCKER_CLI" network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$id" 2>/dev/null)
    # The default network sits on the engine's own bridge, which the slot bookkeeping below handles.
    [ -z "$name" ] && name=br-${id:0:12}
    [ "$name" = "$own" ] || [ "$name" = docker0 ] || echo "$name"
  done
}

engine_stop() {
  local pid=${ENGINE_PID:-$(cat "$ENGINE_RUN/owner.pid" 2>/dev/null)}
  [ -n "$pid" ] || return 0
  local bridges; bridges=$(network_bridges)
  if alive "$pid"; then
    kill -TERM "$pid"
    for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.2; done
    alive "$pid" && kill -KILL "$pid"
  fi
  rm -f "$ENGINE_RUN/owner.pid"; ENGINE_PID=
  local br
  for br in $bridges; do ip link show "$br" >/dev/null 2>&1 && ip link del "$br"; done
  local bridge _bip _pool slot created
  if read -r bridge _bip _pool slot created <"$ENGINE_RUN/network" 2>/dev/null; then
    # Only the bridge this engine created, and only while no other engine has taken the slot since.
    if [ "$created" = 1 ] && [ "$(cat "$ENGINE_SLOTS/$slot" 2>/dev/null)" = "$ENGINE_RUN" ]; then
      ip link show "$bridge" >/dev/null 2>&1 && ip link del "$bridge"
    fi
    [ "$slot" != - ] && [ "$(cat "$ENGINE_SLOTS/$slot" 2>/dev/null)" = "$ENGINE_RUN" ] && rm -f "$ENGINE_SLOTS/$slot"
    rm -f "$ENGINE_RUN/network"
  fi
  engine_log "dockerd $pid stopped"
}

# Registers this shell ($$) as a user of the engine, starting the engine when nothing answers on DOCKER_HOST.
acquire_locked() {
  mkdir -p "$ENGINE_RUN/users"
  engine_answers || engine_start || return 1
  touch "$ENGINE_RUN/users/$$"
}
engine_acquire() {
  local why; why=$(engine_unavailable)
  if [ -n "$why" ] && ! engine_answers; then engine_log "cannot start: $why"; return 1; fi
  locked "$ENGINE_RUN.lock" acquire_locked
}

# Unregisters this shell; the last live user stops an engine this script started (a system engine is never stopped).
release_locked() {
  rm -f "$ENGINE_RUN/users/$$"
  local user
  for user in "$ENGINE_RUN"/users/*; do
    [ -e "$user" ] || continue
    if alive "$(basename "$user")"; then engine_log "engine left running for user $(basename "$user")"; return 0; fi
    rm -f "$user"
  done
  [ -s "$ENGINE_RUN/owner.pid" ] && engine_stop
  return 0
}
engine_release() { locked "$ENGINE_RUN.lock" release_locked; }
