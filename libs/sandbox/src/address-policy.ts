import ipaddr from 'ipaddr.js';

/**
 * Why each non-global range of ipaddr.js's table (IANA's special-purpose registries) may not be reached. Every range
 * the table names is refused: only its `unicast` (everything else) may be, and for IPv6 only within 2000::/3, the
 * one block IANA allocates for global unicast.
 */
const REASONS: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared (CGNAT) address',
  private: 'a private address',
  reserved: 'a reserved address',
  as112: 'an AS112 (local DNS sink) address',
  amt: 'an AMT relay address',
  uniqueLocal: 'a private address',
  ipv4Mapped: 'an IPv4-mapped address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  benchmarking: 'a benchmarking address',
  as112v6: 'an AS112 (local DNS sink) address',
  deprecatedOrchid: 'an ORCHID address',
  orchid2: 'an ORCHID address',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID address',
  segmentRouting: 'a segment routing address',
};
const METADATA = ipaddr.IPv4.parse('169.254.169.254');
/** 64:ff9b::/96, the well-known NAT64 prefix: its last 32 bits are the IPv4 address the translator connects to. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');

/** Why an address must not be reached, or undefined when it is a global unicast address. */
export function deniedAddressReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // Strict forms only: `0x7f.1` and friends are for the URL parser to normalise, never for us to guess.
    parsed = ipaddr.IPv4.isValidFourPartDecimal(bare) ? ipaddr.IPv4.parse(bare) : parseIPv6(bare.split('%')[0]!);
  } catch {
    return 'not an IP address';
  }
  return parsed.kind() === 'ipv4' ? ipv4Reason(parsed as ipaddr.IPv4) : ipv6Reason(parsed as ipaddr.IPv6);
}

/**
 * ipaddr.js reads `::a.b.c.d` (the old IPv4-compatible form) as IPv4-mapped `::ffff:a.b.c.d`; spelling the dotted
 * tail as two hex groups first gives every form its own meaning.
 */
function parseIPv6(text: string): ipaddr.IPv6 {
  const dotted = /^(.*:)([^:]+\.[^:]+)$/.exec(text);
  if (!dotted) return ipaddr.IPv6.parse(text);
  if (!ipaddr.IPv4.isValidFourPartDecimal(dotted[2]!)) throw new Error('not an IP address');
  const [a, b, c, d] = ipaddr.IPv4.parse(dotted[2]!).octets as [number, number, number, number];
  return ipaddr.IPv6.parse(`${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`);
}

function ipv4Reason(address: ipaddr.IPv4): string | undefined {
  if (address.match(METADATA, 32)) return 'the cloud metadata address';
  const range = address.range();
  return range === 'unicast' ? undefined : (REASONS[range] ?? `a special-purpose (${range}) address`);
}

/**
 * IPv6 forms that carry an IPv4 address are judged by that address where a connection really goes to it (IPv4-mapped,
 * the well-known NAT64 prefix that IPv6-only networks use to reach IPv4 hosts); every other special range is refused
 * whole (6to4, Teredo, local-use NAT64 and IPv4-translated forms: obsolete or routed by whoever runs them).
 */
function ipv6Reason(address: ipaddr.IPv6): string | undefined {
  const range = address.range();
  if (range === 'ipv4Mapped') return embedded(address.toIPv4Address(), 'IPv4-mapped');
  if (range === 'rfc6052' && address.match(NAT64_WELL_KNOWN, 96)) {
    const [a, b, c, d] = address.toByteArray().slice(12);
    return embedded(new ipaddr.IPv4([a!, b!, c!, d!]), 'NAT64');
  }
  if (range !== 'unicast') return REASONS[range] ?? `a special-purpose (${range}) address`;
  // Outside 2000::/3 nothing is allocated for global unicast: the rest of ::/8 (IPv4-compatible forms) included.
  return address.match(GLOBAL_UNICAST_V6, 3) ? undefined : 'a reserved address';
}

function embedded(inner: ipaddr.IPv4, form: string): string | undefined {
  const reason = ipv4Reason(inner);
  return reason ? `${reason} (${form}: ${inner.toString()})` : undefined;
}
