import { describe, expect, it } from 'vitest';
import { CREDENTIAL_OUTAGE_POLICY, credentialScope, DEFAULT_OUTAGE_POLICY, outageEndNotice, recordFailure, refusalNoticeDue, type Outage } from '../../src/domain/destination-outage.js';

const T = new Date('2026-03-10T02:00:00.000Z');
const outage = (noticedAt: Date | null): Outage => ({ failingSince: T, failures: 7, heldUntil: T, lastError: 'HTTP 500', noticedAt, cause: 'unreachable' });

describe('outageEndNotice: how an outage ends, and what the platform hears', () => {
  it('a noticed outage ends "recovered" on a delivery, "refused" on a permanent answer (never "recovered")', () => {
    expect(outageEndNotice(outage(T), 'delivered')).toBe('recovered');
    expect(outageEndNotice(outage(T), 'refused')).toBe('refused');
  });

  it('an outage nobody was told of ends quietly; no outage, nothing to end', () => {
    expect(outageEndNotice(outage(null), 'delivered')).toBeUndefined();
    expect(outageEndNotice(outage(null), 'refused')).toBeUndefined();
    expect(outageEndNotice(undefined, 'refused')).toBeUndefined();
  });
});

describe('refused credentials: a state of the destination (or the Slack workspace), not of the row', () => {
  const later = (ms: number) => new Date(T.getTime() + ms);

  it('every Slack channel shares the bot token, so a refusal holds the workspace; other kinds hold the destination', () => {
    expect(credentialScope('slack:CACME')).toBe('slack:*');
    expect(credentialScope('slack:CPLAT')).toBe('slack:*');
    expect(credentialScope('webhook:hooks.example.com/3f9c')).toBe('webhook:hooks.example.com/3f9c');
    expect(credentialScope('pagerduty:9a1b')).toBe('pagerduty:9a1b');
    expect(credentialScope('email:ops@example.com')).toBe('email:ops@example.com');
  });

  it('is told at the first refusal, and probed at a back-off that never exceeds 5 minutes', () => {
    const first = recordFailure(undefined, 'token_revoked', T, CREDENTIAL_OUTAGE_POLICY, 'credentials');
    expect(first).toMatchObject({ raiseNotice: true, outage: { cause: 'credentials', failures: 1, noticedAt: T, heldUntil: later(15_000) } });
    let outage = first.outage;
    for (let i = 1; i <= 20; i++) {
      const next = recordFailure(outage, 'token_revoked', later(i * 60_000), CREDENTIAL_OUTAGE_POLICY, 'credentials');
      expect(next.raiseNotice).toBe(false);
      expect(next.outage.heldUntil.getTime() - later(i * 60_000).getTime()).toBeLessThanOrEqual(5 * 60_000);
      outage = next.outage;
    }
    expect(outage).toMatchObject({ failingSince: T, noticedAt: T });
    expect(outage.failures).toBeGreaterThan(5);
  });

  it('refusals of rows already in flight while the hold stands do not push the next probe further off', () => {
    const first = recordFailure(undefined, 'token_revoked', T, CREDENTIAL_OUTAGE_POLICY, 'credentials').outage;
    const inFlight = recordFailure(first, 'invalid_auth', later(2_000), CREDENTIAL_OUTAGE_POLICY, 'credentials');
    expect(inFlight).toMatchObject({ raiseNotice: false, outage: { failures: 1, heldUntil: later(15_000), lastError: 'invalid_auth' } });
  });

  it('a destination held as unreachable whose credentials are then refused starts a new outage, told at once', () => {
    const unreachable = recordFailure(undefined, 'HTTP 503', T, DEFAULT_OUTAGE_POLICY).outage;
    const refused = recordFailure(unreachable, 'HTTP 401', later(5_000), CREDENTIAL_OUTAGE_POLICY, 'credentials');
    expect(refused).toMatchObject({ raiseNotice: true, outage: { cause: 'credentials', failingSince: later(5_000), failures: 1 } });
  });

  it('ends "recovered" once anything but a refusal of the credentials comes back, never "refused"', () => {
    const refused: Outage = { ...outage(T), cause: 'credentials', lastError: 'token_revoked' };
    expect(outageEndNotice(refused, 'delivered')).toBe('recovered');
    expect(outageEndNotice(refused, 'refused')).toBe('recovered');
  });
});

describe('refusalNoticeDue', () => {
  const at = (h: number) => new Date(Date.UTC(2026, 2, 10) + h * 3_600_000);
  it('tells the first refusal, then again only a day after the last notice', () => {
    expect(refusalNoticeDue(undefined, at(0))).toBe(true);
    expect(refusalNoticeDue(at(0), at(23.99))).toBe(false);
    expect(refusalNoticeDue(at(0), at(24))).toBe(true);
  });
});
