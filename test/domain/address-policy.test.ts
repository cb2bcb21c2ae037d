import { describe, expect, it } from 'vitest';
import { addressAllowed, allowListProblem, clientKey, hostAllowed, isNonPublicAddress, parseAllowList } from '../../src/domain/address-policy.js';

describe('address policy', () => {
  it.each([
    '127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '::', '10.0.0.1', '172.16.5.5', '192.168.1.1', '169.254.169.254', 'fe80::1', 'fd00:ec2::254',
    '100.64.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '224.0.0.1', '255.255.255.255', 'not-an-ip',
    // IPv6 forms that carry an IPv4 address, and the other ranges that are not the internet.
    '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '2002:7f00:1::', '2002:a9fe:a9fe:1::5', 'fec0::1', '100::1',
    // Local-use NAT64 (RFC 8215), whatever IPv4 address it carries, in whichever of its prefix lengths.
    '64:ff9b:1::7f00:1', '64:ff9b:1:a00:1::', '64:ff9b:1:ffff::a9fe:a9fe',
  ])('%s is not public', (ip) => {
    expect(isNonPublicAddress(ip)).toBe(true);
    expect(addressAllowed(ip, parseAllowList([]))).toBe(false);
  });

  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34', '::ffff:0:5db8:d822', '2002:5db8:d822::1'])('%s is public', (ip) => {
    expect(addressAllowed(ip, parseAllowList([]))).toBe(true);
  });

  it('a private address is allowed only when listed by IP or CIDR, never through a listed name', () => {
    const byName = parseAllowList(['localhost', 'jobs.internal']);
    expect(hostAllowed('localhost', byName)).toBe(true);
    expect(addressAllowed('127.0.0.1', byName)).toBe(false);
    const byAddress = parseAllowList(['127.0.0.1', '10.20.0.0/16']);
    expect(addressAllowed('127.0.0.1', byAddress)).toBe(true);
    expect(addressAllowed('10.20.3.4', byAddress)).toBe(true);
    expect(addressAllowed('10.21.0.1', byAddress)).toBe(false);
    expect(hostAllowed('[::ffff:127.0.0.1]', byAddress)).toBe(true);
  });

  it('hosts: exact names case-insensitively, "*.domain" for its subdomains only', () => {
    const list = parseAllowList(['Jobs.Example.com', '*.corp.example']);
    expect(hostAllowed('jobs.example.com', list)).toBe(true);
    expect(hostAllowed('jobs.example.com.', list)).toBe(true);
    expect(hostAllowed('evil-jobs.example.com', list)).toBe(false);
    expect(hostAllowed('a.corp.example', list)).toBe(true);
    expect(hostAllowed('corp.example', list)).toBe(false);
    expect(hostAllowed('evilcorp.example', list)).toBe(false);
  });

  it('unusable entries are named', () => {
    expect(allowListProblem('10.0.0.0/33')).toBe('prefix length out of range');
    expect(allowListProblem('http://x')).toMatch(/a host name/);
    expect(allowListProblem('*.example.com')).toBeUndefined();
  });

  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::99', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['unknown', 'unknown'],
  ])('a client at %s is counted as %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});

