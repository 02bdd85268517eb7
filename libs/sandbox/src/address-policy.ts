import { BlockList, isIPv4, isIPv6 } from 'node:net';

type Family = 'ipv4' | 'ipv6';

/** Address ranges a skill may never reach, by the reason we give when refusing. */
const DENIED_RANGES: ReadonlyArray<readonly [reason: string, family: Family, network: string, prefix: number]> = [
  ['the cloud metadata address', 'ipv4', '169.254.169.254', 32],
  ['a broadcast address', 'ipv4', '255.255.255.255', 32],
  ['an unspecified address', 'ipv4', '0.0.0.0', 8],
  ['a loopback address', 'ipv4', '127.0.0.0', 8],
  ['a private address', 'ipv4', '10.0.0.0', 8],
  ['a private address', 'ipv4', '172.16.0.0', 12],
  ['a private address', 'ipv4', '192.168.0.0', 16],
  ['a link-local address', 'ipv4', '169.254.0.0', 16],
  ['a shared (CGNAT) address', 'ipv4', '100.64.0.0', 10],
  ['a multicast address', 'ipv4', '224.0.0.0', 4],
  ['a reserved address', 'ipv4', '240.0.0.0', 4],
  ['a reserved address', 'ipv4', '192.0.0.0', 24],
  ['a documentation address', 'ipv4', '192.0.2.0', 24],
  ['a benchmarking address', 'ipv4', '198.18.0.0', 15],
  ['a documentation address', 'ipv4', '198.51.100.0', 24],
  ['a documentation address', 'ipv4', '203.0.113.0', 24],
  ['an unspecified address', 'ipv6', '::', 128],
  ['a loopback address', 'ipv6', '::1', 128],
  ['a private address', 'ipv6', 'fc00::', 7],
  ['a link-local address', 'ipv6', 'fe80::', 10],
  ['a multicast address', 'ipv6', 'ff00::', 8],
  ['a documentation address', 'ipv6', '2001:db8::', 32],
  ['a discard-only address', 'ipv6', '100::', 64],
  // Translation prefixes embed IPv4 addresses that a gateway may route to private networks.
  ['a NAT64 address', 'ipv6', '64:ff9b::', 96],
  ['a NAT64 address', 'ipv6', '64:ff9b:1::', 48],
  ['a 6to4 address', 'ipv6', '2002::', 16],
  ['an IPv4-compatible IPv6 address', 'ipv6', '::', 96],
];

const lists = new Map<string, BlockList>();
for (const [reason, family, network, prefix] of DENIED_RANGES) {
  const list = lists.get(reason) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  lists.set(reason, list);
}

/** Why an address must not be reached, or undefined when it is a public unicast address. */
export function deniedAddressReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return firstMatch(bare, 'ipv4');
  if (!isIPv6(bare)) return 'not an IP address';
  const mapped = mappedIPv4(bare);
  if (mapped !== undefined) {
    const inner = firstMatch(mapped, 'ipv4');
    return inner ? `${inner} (IPv4-mapped)` : undefined;
  }
  return firstMatch(bare, 'ipv6');
}

function firstMatch(address: string, family: Family): string | undefined {
  for (const [reason, list] of lists) {
    if (list.check(address, family)) return reason;
  }
  return undefined;
}

/** The IPv4 address inside `::ffff:a.b.c.d` / `::ffff:xxxx:yyyy`, if the address is IPv4-mapped. */
export function mappedIPv4(address: string): string | undefined {
  const words = expandIPv6(address);
  if (!words || words.slice(0, 5).some((w) => w !== 0) || words[5] !== 0xffff) return undefined;
  return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
}

function expandIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...Array<string>(Math.max(fill, 0)).fill('0'), ...right].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}
