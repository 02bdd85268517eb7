#!/usr/bin/env bash
# Images for a run without any image registry (this project's machines): a Debian bookworm base made with
# debootstrap from the Debian archive, and every image of the compose file built on it through build
# arguments (the Dockerfiles' defaults stay the official images). Source docker/engine.sh first.
#   local_images_build   -> alfred-local/debian:bookworm-slim, alfred-local/node:24, alfred:local, alfred-registry:local,
#                           alfred-local/nats, alfred-local/redis, alfred-local/redis-exporter, alfred-local/prometheus
# The app is built on the host (containers here reach the Debian archive but not the npm registry) and
# copied in: ALFRED_APP_FROM=host. The debootstrap tree is cached as a tarball under a stable path.

REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BASE_IMAGE=alfred-local/debian:bookworm-slim
BASE_CACHE=${ALFRED_BASE_CACHE:-/var/cache/alfred/debian-bookworm-slim.tar}
DEBIAN_MIRROR=${ALFRED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOST_APP=$REPO/.docker-host-app
BUILD_LOG=${ALFRED_BUILD_LOG:-/tmp/alfred-image-build.log}

images_log() { echo "images: $*" >&2; }
docker_() { "$DOCKER_CLI" "$@"; }

# Makes a debootstrap tree what debian:bookworm-slim is, which this base stands in for: no documentation, manuals or
# translations, now or from later installs (dpkg excludes them), and apt keeps neither downloaded packages nor its
# binary caches (80 MB in every image that installs anything).
slim_tree() { # dir
  local dir=$1
  cat >"$dir/etc/dpkg/dpkg.cfg.d/alfred-slim" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
DPKG
  local clean='rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true'
  cat >"$dir/etc/apt/apt.conf.d/alfred-clean" <<APT
DPkg::Post-Invoke { "$clean"; };
APT::Update::Post-Invoke { "$clean"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$dir/usr/share/man"/* "$dir/usr/share/info"/* "$dir/usr/share/groff"/* "$dir/usr/share/lintian"/* \
    "$dir/usr/share/locale"/* "$dir/var/cache/apt"/*.bin
}

# The Debian base: a cached tarball when one is there (it is only ever the output of the same debootstrap).
base_image() {
  docker_ image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  if [ ! -s "$BASE_CACHE" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
    local dir; dir=$(mktemp -d)
    images_log "debootstrap --variant=minbase bookworm (about 25 s)"
    debootstrap --variant=minbase bookworm "$dir" "$DEBIAN_MIRROR" >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; return 1; }
    # Same sources as Debian's official images: the release, its updates and security.
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
      "$DEBIAN_MIRROR" "$DEBIAN_MIRROR" >"$dir/etc/apt/sources.list"
    rm -rf "$dir/var/cache/apt/archives"/*.deb "$dir/var/lib/apt/lists"/*
    slim_tree "$dir"
    mkdir -p "$(dirname "$BASE_CACHE")"
    tar -C "$dir" -cf "$BASE_CACHE.tmp" . && mv "$BASE_CACHE.tmp" "$BASE_CACHE"
    rm -rf "$dir" "$dir.log"
  else
    images_log "using the cached debootstrap tree $BASE_CACHE"
  fi
  docker_ import "$BASE_CACHE" "$BASE_IMAGE" >/dev/null
}

# The app as the host built it: dist, production node_modules trimmed as the Dockerfile's npm path trims them
# (docker/slim-node-modules.mjs, with binutils' strip), and the Node 24 binary npm brought.
host_app() {
  (cd "$REPO" && npm run build >/dev/null)
  command -v strip >/dev/null || { apt-get update -qq && apt-get install -y -qq binutils >/dev/null; }
  rm -rf "$HOST_APP" && mkdir -p "$HOST_APP"
  cp -a "$REPO/package.json" "$REPO/package-lock.json" "$REPO/.npmrc" "$REPO/dist" "$HOST_APP/"
  # Hard links: a second copy of node_modules costs neither time nor disk; prune and the trim only unlink (the trim
  # strips copies), so the development tree is left as it was.
  cp -al "$REPO/node_modules" "$HOST_APP/node_modules"
  (cd "$HOST_APP" && npm prune --omit=dev --no-audit --no-fund --ignore-scripts >/dev/null)
  node "$REPO/docker/slim-node-modules.mjs" "$HOST_APP/node_modules" >&2
  mkdir -p "$HOST_APP/bin" && cp -L "$REPO/node_modules/node/bin/node" "$HOST_APP/bin/node"
}

build() { # tag dockerfile [build args...]
  local tag=$1 file=$2; shift 2
  images_log "building $tag"
  docker_ build -t "$tag" -f "$file" "$@" "$REPO" >"$BUILD_LOG" 2>&1 || { images_log "build of $tag failed:"; tail -30 "$BUILD_LOG" >&2; return 1; }
}

local_images_build() {
  base_image || return 1
  host_app || return 1
  build alfred-local/node:24 docker/node-local.Dockerfile "--build-arg=BASE_IMAGE=$BASE_IMAGE" || return 1
  build alfred:local Dockerfile --target service --build-arg NODE_IMAGE=alfred-local/node:24 --build-arg ALFRED_APP_FROM=host || return 1
  build alfred-registry:local Dockerfile --target skill-registry --build-arg NODE_IMAGE=alfred-local/node:24 \
    --build-arg ALFRED_APP_FROM=host || return 1
  local debian=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
  build alfred-local/nats docker/nats.Dockerfile "${debian[@]}" || return 1
  build alfred-local/redis docker/redis.Dockerfile "${debian[@]}" || return 1
  build alfred-local/redis-exporter docker/redis-exporter.Dockerfile "${debian[@]}" || return 1
  build alfred-local/prometheus docker/prometheus.Dockerfile "${debian[@]}" || return 1
}
