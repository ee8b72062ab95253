/**
 * Which IP addresses a webhook must never reach: everything that is not a
 * publicly routable unicast address (IANA special-purpose registries).
 * IPv6 is an allow-list (global unicast 2000::/3 only) minus special blocks;
 * addresses that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address, so
 * ::ffff:127.0.0.1 is loopback. Pure.
 */
import { isIPv4, isIPv6 } from 'node:net';

type Range = [prefix: bigint, bits: number, reason: string];

function v4ToInt(ip: string): bigint {
  return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** 8 groups of 16 bits as one 128-bit number; handles `::` and a trailing dotted quad. */
export function v6ToInt(ip: string): bigint {
  let text = ip.split('%')[0].toLowerCase();
  const quad = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (quad) {
    const v4 = v4ToInt(quad[1]);
    text = text.slice(0, -quad[1].length) + `${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === null ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function v4Range(cidr: string, reason: string): Range {
  const [ip, bits] = cidr.split('/');
  return [v4ToInt(ip), Number(bits), reason];
}

function v6Range(cidr: string, reason: string): Range {
  const [ip, bits] = cidr.split('/');
  return [v6ToInt(ip), Number(bits), reason];
}

function inRange(n: bigint, width: number, [prefix, bits]: Range): boolean {
  const shift = BigInt(width - bits);
  return n >> shift === prefix >> shift;
}

// Order matters: the first match names the reason (metadata before link-local).
const V4: Range[] = [
  v4Range('0.0.0.0/8', 'unspecified ("this network")'),
  v4Range('10.0.0.0/8', 'private'),
  v4Range('100.64.0.0/10', 'shared (CGNAT)'),
  v4Range('127.0.0.0/8', 'loopback'),
  v4Range('169.254.169.254/32', 'cloud metadata'),
  v4Range('169.254.0.0/16', 'link-local'),
  v4Range('172.16.0.0/12', 'private'),
  v4Range('192.0.0.0/24', 'IETF protocol assignment'),
  v4Range('192.0.2.0/24', 'documentation'),
  v4Range('192.88.99.0/24', '6to4 relay'),
  v4Range('192.168.0.0/16', 'private'),
  v4Range('198.18.0.0/15', 'benchmarking'),
  v4Range('198.51.100.0/24', 'documentation'),
  v4Range('203.0.113.0/24', 'documentation'),
  v4Range('224.0.0.0/4', 'multicast'),
  v4Range('240.0.0.0/4', 'reserved or broadcast'),
];

const V6: Range[] = [
  v6Range('::/128', 'unspecified'),
  v6Range('::1/128', 'loopback'),
  v6Range('fd00:ec2::254/128', 'cloud metadata'),
  v6Range('fc00::/7', 'private (unique local)'),
  v6Range('fe80::/10', 'link-local'),
  v6Range('fec0::/10', 'site-local'),
  v6Range('ff00::/8', 'multicast'),
  v6Range('64:ff9b:1::/48', 'private (local NAT64)'),
  v6Range('100::/64', 'discard-only'),
  v6Range('2001::/23', 'IETF protocol assignment (Teredo, ORCHID...)'),
  v6Range('2001:db8::/32', 'documentation'),
  v6Range('3fff::/20', 'documentation'),
];

const MAPPED = v6Range('::ffff:0:0/96', '');
const NAT64 = v6Range('64:ff9b::/96', '');
const SIX_TO_FOUR = v6Range('2002::/16', '');
const GLOBAL_UNICAST = v6Range('2000::/3', '');

function v4Reason(ip: string): string | null {
  const n = v4ToInt(ip);
  return V4.find((r) => inRange(n, 32, r))?.[2] ?? null;
}

function intToV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

/** Why an address is forbidden, or null when it is a public unicast address. */
export function forbiddenAddressReason(ip: string): string | null {
  if (isIPv4(ip)) return v4Reason(ip);
  if (!isIPv6(ip.split('%')[0])) return 'invalid';
  const n = v6ToInt(ip);
  const embedded = (v4: bigint, how: string) => {
    const reason = v4Reason(intToV4(v4));
    return reason ? `${how} ${reason}` : null;
  };
  if (inRange(n, 128, MAPPED)) return embedded(n & 0xffffffffn, 'IPv4-mapped');
  if (inRange(n, 128, NAT64)) return embedded(n & 0xffffffffn, 'NAT64');
  const special = V6.find((r) => inRange(n, 128, r));
  if (special) return special[2];
  if (inRange(n, 128, SIX_TO_FOUR)) return embedded((n >> 80n) & 0xffffffffn, '6to4');
  if (!inRange(n, 128, GLOBAL_UNICAST)) return 'reserved';
  return null;
}
