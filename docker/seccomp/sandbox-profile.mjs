#!/usr/bin/env node
// Writes docker/seccomp/sandbox.json, the seccomp profile of the services that run untrusted code inside bubblewrap
// (x-sandboxed in docker-compose.yml): Docker's default profile with two changes.
//   1. The calls Docker's default grants to containers holding CAP_SYS_ADMIN are not granted for it. Those services
//      hold SYS_ADMIN only in their entrypoint (docker/sandbox-entrypoint.sh), and bpf, perf_event_open, setns,
//      fanotify_init, open_tree, syslog and the rest must stay refused to the service and to sandboxed code.
//   2. Everyone in the container may make the calls bubblewrap needs to build a sandbox in its own user namespace,
//      and no others: clone and unshare with namespace flags, mount, umount2, pivot_root, sethostname. Whether a
//      namespace may be created is then the kernel's decision (an unprivileged process needs a new user namespace).
// Regenerate after a Docker upgrade from the default profile of the engine in use, e.g. Debian's:
//   apt-get download golang-github-docker-docker-dev && dpkg-deb -x golang-github-docker-docker-dev_*.deb /tmp/moby
//   node docker/seccomp/sandbox-profile.mjs \
//     /tmp/moby/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
// Docker's profile is Apache-2.0 (Docker, Inc.); e2e/compose.e2e-spec.ts checks the two changes on every test run.
import { readFileSync, writeFileSync } from 'node:fs';

export const BUBBLEWRAP_CALLS = ['clone', 'unshare', 'mount', 'umount2', 'pivot_root', 'sethostname'];
const ADMIN = 'CAP_SYS_ADMIN';

/** Docker's default profile as the sandboxed services need it (see the header). */
export function sandboxProfile(dockerDefault) {
  const syscalls = [];
  for (const rule of dockerDefault.syscalls) {
    if (rule.includes?.caps?.includes(ADMIN)) continue;
    const excluded = rule.excludes?.caps;
    // Rules that apply "unless the container holds SYS_ADMIN" (clone without namespace flags, clone3 -> ENOSYS)
    // apply here too: the container holds it, the processes that make these calls do not.
    if (excluded?.includes(ADMIN)) {
      const caps = excluded.filter((c) => c !== ADMIN);
      const { caps: _dropped, ...rest } = rule.excludes;
      syscalls.push({ ...rule, excludes: caps.length > 0 ? { ...rest, caps } : rest });
    } else {
      syscalls.push(rule);
    }
  }
  syscalls.push({
    names: BUBBLEWRAP_CALLS,
    action: 'SCMP_ACT_ALLOW',
    args: [],
    comment: 'bubblewrap: a sandbox in its own user, mount, PID, network, IPC and UTS namespaces (Alfred)',
    includes: {},
    excludes: {},
  });
  return { ...dockerDefault, syscalls };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [source, target = new URL('./sandbox.json', import.meta.url).pathname] = process.argv.slice(2);
  if (!source) {
    console.error('usage: node docker/seccomp/sandbox-profile.mjs <docker default.json> [sandbox.json]');
    process.exit(2);
  }
  writeFileSync(target, `${JSON.stringify(sandboxProfile(JSON.parse(readFileSync(source, 'utf8'))), null, 2)}\n`);
  console.log(`wrote ${target}`);
}
