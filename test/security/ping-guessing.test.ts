import { describe, expect, it } from 'vitest';
import { UnknownPingLimiter } from '../../src/http/unknown-ping-limiter.js';

/** Guessing ping keys from fresh addresses: an IPv6 host holds a /64, so each of its addresses must share one allowance. */
describe('unknown ping keys per client', () => {
  it('addresses of one IPv6 /64 share the allowance; another /64 and an IPv4 client have their own', () => {
    const limiter = new UnknownPingLimiter(3);
    const now = 1_000_000;
    for (let i = 1; i <= 3; i++) {
      const address = `2001:db8:7:9::${i.toString(16)}`;
      expect(limiter.check(address, now).ok).toBe(true);
      limiter.charge(address, now);
    }
    expect(limiter.check('2001:db8:7:9:dead:beef:1:2', now)).toMatchObject({ ok: false });
    expect(limiter.check('2001:db8:7:a::1', now).ok).toBe(true);
    for (let i = 0; i < 3; i++) limiter.charge('::ffff:198.51.100.4', now);
    expect(limiter.check('198.51.100.4', now)).toMatchObject({ ok: false });
    expect(limiter.check('198.51.100.5', now).ok).toBe(true);
  });
});
