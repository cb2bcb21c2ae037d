import { BlockList, isIP } from 'node:net';

/**
 * Where a tenant's http launcher may connect (docs/security.md). Two checks,
 * both against the operator's allow-list (HTTP_LAUNCHER_ALLOWED_HOSTS and the
 * tenant's `launcherHosts`), whose entries are host names (`jobs.example.com`),
 * wildcard domains (`*.example.com`), IP addresses or CIDR ranges:
 * - the URL's host must be listed (when the launcher is set, and again at launch);
 * - every address it resolves to when connecting must be public, unless that
 *   address itself is listed by IP or CIDR: a listed name that resolves to
 *   127.0.0.1 or 169.254.169.254 (DNS rebinding) is still refused.
 * Pure: no DNS here; the caller resolves and asks.
 */

/** Addresses a tenant must never reach by default: this host, the private network, cloud metadata. */
const NON_PUBLIC = (() => {
  const list = new BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8], // unspecified, "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // carrier-grade NAT
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  const v6: [string, number][] = [
    ['::', 128], // unspecified
    ['::1', 128],
    ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254 among them)
    ['fe80::', 10], // link-local
    ['fec0::', 10], // site-local (deprecated, still routed by some networks)
    ['100::', 64], // discard
    // Local-use NAT64 (RFC 8215): a network's own translator, which reaches its private IPv4 addresses
    // (64:ff9b:1:a00:1:: is 10.0.0.1 behind a /48 prefix); the well-known 64:ff9b::/96 is judged by its IPv4 address.
    ['64:ff9b:1::', 48],
    ['ff00::', 8], // multicast
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

/**
 * The IPv4 address inside an IPv6 one that carries it: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible
 * (::a.b.c.d, deprecated), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::).
 * Judged as that IPv4 address: a stack or relay that routes them reaches it.
 */
function embeddedIPv4(ip: string): string | undefined {
  const dotted = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip) ?? /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/i.exec(ip);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function normalise(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { address: bare, family: 'ipv4' };
  if (family === 6) {
    const v4 = embeddedIPv4(bare);
    return v4 ? { address: v4, family: 'ipv4' } : { address: bare, family: 'ipv6' };
  }
  return undefined;
}

/** Loopback, private, link-local, metadata, unspecified or otherwise not on the public internet. */
export function isNonPublicAddress(ip: string): boolean {
  const n = normalise(ip);
  if (!n) return true;
  return NON_PUBLIC.check(n.address, n.family);
}

export interface AllowList {
  hosts: Set<string>;
  domains: string[];
  addresses: BlockList;
}

/** Entries as written by the operator; unusable ones are the config's to report (see `allowListProblem`). */
export function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { hosts: new Set(), domains: [], addresses: new BlockList() };
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    const ip = normalise(cidr ? cidr[1]! : entry);
    if (ip) {
      const prefix = cidr ? Number(cidr[2]) : ip.family === 'ipv4' ? 32 : 128;
      list.addresses.addSubnet(ip.address, prefix, ip.family);
      list.hosts.add(ip.address);
    } else if (entry.startsWith('*.')) {
      list.domains.push(entry.slice(1));
    } else if (entry) {
      list.hosts.add(entry.replace(/\.$/, ''));
    }
  }
  return list;
}

/** Why an entry cannot be used, or undefined. */
export function allowListProblem(entry: string): string | undefined {
  const e = entry.trim().toLowerCase();
  const cidr = /^(.+)\/(\d{1,3})$/.exec(e);
  if (cidr) {
    const ip = normalise(cidr[1]!);
    if (!ip) return 'a CIDR range needs an IP address before the "/"';
    if (Number(cidr[2]) > (ip.family === 'ipv4' ? 32 : 128)) return 'prefix length out of range';
    return undefined;
  }
  if (normalise(e)) return undefined;
  if (!/^(\*\.)?[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*\.?$/.test(e)) return 'a host name, "*.domain", an IP address or a CIDR range';
  return undefined;
}

/** Whether the URL's host is listed (names compared case-insensitively; IP literals by address). */
export function hostAllowed(host: string, list: AllowList): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const ip = normalise(h);
  if (ip) return list.addresses.check(ip.address, ip.family);
  return list.hosts.has(h) || list.domains.some((d) => h.endsWith(d));
}

/** Whether a connection to `ip` (as resolved) may be made: public, or listed by address. */
export function addressAllowed(ip: string, list: AllowList): boolean {
  const n = normalise(ip);
  if (!n) return false;
  if (list.addresses.check(n.address, n.family)) return true;
  return !NON_PUBLIC.check(n.address, n.family);
}

/**
 * Who a client is, for limits per client: an IPv4 address itself (an
 * IPv4-mapped one unwrapped), an IPv6 address by its /64, the block one
 * host or one customer is handed: counted per address, a host with a /64
 * would guess from 2^64 fresh addresses, each with a full allowance.
 */
export function clientKey(address: string): string {
  const n = normalise(address);
  if (!n) return address;
  if (n.family === 'ipv4') return n.address;
  const [head = '', tail = ''] = n.address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = n.address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

