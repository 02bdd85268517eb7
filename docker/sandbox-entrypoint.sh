#!/bin/sh
# The entrypoint of the two services that run untrusted code inside bubblewrap (skill-runner, agent-runtime; see
# x-sandboxed in docker-compose.yml). It starts as root holding only SYS_ADMIN, SETUID, SETGID and SETPCAP, makes
# the two mounts bubblewrap needs in a container, then runs the service as `node` with no capability left (empty
# bounding set) and no_new_privs, so nothing the service starts can regain one.
#
# 1. A procfs no other mount covers, in a folder only root can enter. The kernel lets bubblewrap mount a fresh /proc
#    for a sandbox's PID namespace only where the container already has a fully visible procfs; Docker masks parts
#    of /proc (kcore, keys, timer_list, ...), so it refuses. This mount satisfies that check and nothing reads it:
#    the container's /proc stays masked, and neither the service nor the sandboxes can reach /run/alfred.
# 2. /proc/sys/user writable. `bwrap --disable-userns` limits the sandbox's own user namespace to no children by
#    writing user.max_user_namespaces, which Docker's read-only /proc/sys refuses. These limits are per user
#    namespace and writable only with CAP_SYS_RESOURCE over it; the rest of /proc/sys stays read-only.
set -eu
mkdir -p /run/alfred/proc
chmod 0700 /run/alfred
mountpoint -q /run/alfred/proc || mount -t proc -o nosuid,nodev,noexec proc /run/alfred/proc
mount --bind /run/alfred/proc/sys/user /proc/sys/user
exec setpriv --reuid=node --regid=node --init-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
