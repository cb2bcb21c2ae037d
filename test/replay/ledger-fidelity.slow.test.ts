import { describe, expect, it } from 'vitest';
import { roundTrip } from './ledger-round-trip.js';

/**
 * The sweep behind ledger-fidelity.test.ts: periods lived through the engine
 * in several zones (a DST change inside the period in New York in March and
 * Berlin in October, Kathmandu's 45-minute offset) and cadences, with
 * retries, missed ticks, timeouts, empty output, hysteresis and manual runs,
 * rebuilt from the ledger and replayed under the same policy: the same
 * alerts and events at the same instants.
 */

const tenants = [{ id: 'acme', name: 'Acme', channel: 'CACME' }];
const fail = { status: 'failed', error: 'HTTP 503 from api.vendor.example' } as const;

describe('replay --from-db across zones and cadences', { timeout: 600_000 }, () => {
  it('a daily job in New York failing over the spring-forward night', async () => {
    const r = await roundTrip(
      {
        start: '2026-03-05T00:00:00Z',
        until: '2026-03-12T00:00:00Z',
        tenants,
        workflows: [{ tenant: 'acme', name: 'ny', cron: '30 2 * * *', timezone: 'America/New_York' }],
        outcomes: [{ workflow: 'ny', from: '2026-03-07T00:00:00Z', to: '2026-03-09T12:00:00Z', attempts: [fail] }],
      },
      'acme',
    );
    expect(r.lived.alerts).toHaveLength(1);
    expect(r.replayed).toEqual(r.lived);
  });

  it('hourly in Berlin over the fall-back night and weekdays in Kathmandu, from a period starting mid-incident', async () => {
    const input = {
      start: '2026-10-23T20:00:00Z',
      until: '2026-10-26T12:00:00Z',
      tenants,
      workflows: [
        { tenant: 'acme', name: 'be', cron: '30 * * * *', timezone: 'Europe/Berlin' },
        { tenant: 'acme', name: 'ktm', cron: '15 9 * * 1-5', timezone: 'Asia/Kathmandu' },
      ],
      outcomes: [
        { workflow: 'be', from: '2026-10-24T23:00:00Z', to: '2026-10-25T02:00:00Z', attempts: [fail] },
        { workflow: 'ktm', attempts: [fail] },
      ],
    };
    const whole = await roundTrip(input, 'acme');
    expect(whole.lived.alerts).toHaveLength(2);
    expect(whole.replayed).toEqual(whole.lived);
    const late = await roundTrip(input, 'acme', { since: '2026-10-25T01:00:00Z' });
    expect(late.replayed).toEqual(late.lived);
  });

  it('every five minutes, observed: missed ticks, empty output against minRows, recoverAfter 3 and a Run now', async () => {
    const r = await roundTrip(
      {
        start: '2026-03-10T00:00:00Z',
        until: '2026-03-10T06:00:00Z',
        tenants,
        workflows: [{ tenant: 'acme', name: 'five', cron: '*/5 * * * *', policy: { recoverAfter: 3, minRows: 5 } }],
        outcomes: [
          { workflow: 'five', from: '2026-03-10T01:00:00Z', to: '2026-03-10T01:30:00Z', attempts: [{ status: 'missing' }] },
          { workflow: 'five', from: '2026-03-10T02:00:00Z', to: '2026-03-10T02:30:00Z', attempts: [{ status: 'succeeded', rows: 0 }] },
          { workflow: 'five', attempts: [{ status: 'succeeded', rows: 10 }] },
        ],
        actions: [{ at: '2026-03-10T02:32:00Z', user: 'U1', channel: 'CACME', workflow: 'five', action: 'run_now', outcome: { status: 'succeeded', rows: 10 } }],
      },
      'acme',
    );
    expect(r.lived.alerts).toHaveLength(2);
    expect(r.replayed).toEqual(r.lived);
  });

  it('a nightly that hangs until its timeout, and its retry too', async () => {
    const r = await roundTrip(
      {
        start: '2026-03-10T00:00:00Z',
        until: '2026-03-11T12:00:00Z',
        tenants,
        workflows: [{ tenant: 'acme', name: 'daily', cron: '0 2 * * *', policy: { timeoutSeconds: 3600, retries: 1 } }],
        outcomes: [{ workflow: 'daily', from: '2026-03-10T02:00:00Z', to: '2026-03-10T02:00:00Z', attempts: [{ status: 'hangs' }] }],
      },
      'acme',
    );
    expect(r.lived.alerts).toHaveLength(1);
    expect(r.replayed).toEqual(r.lived);
  });

  it('a monthly job in Kathmandu, an hourly job whose policy changed twice while failing, and a run still going at the end', async () => {
    const r = await roundTrip(
      {
        start: '2026-02-27T00:00:00Z',
        until: '2026-03-02T06:00:00Z',
        tenants,
        workflows: [
          { tenant: 'acme', name: 'monthly', cron: '0 3 1 * *', timezone: 'Asia/Kathmandu' },
          { tenant: 'acme', name: 'hourly', cron: '0 * * * *', policy: { alertAfter: 5, retries: 0 } },
          { tenant: 'acme', name: 'slow', cron: '0 5 * * *', policy: { timeoutSeconds: 7200 } },
        ],
        outcomes: [
          { workflow: 'monthly', attempts: [fail] },
          { workflow: 'hourly', from: '2026-03-01T00:00:00Z', to: '2026-03-01T10:00:00Z', attempts: [fail] },
          { workflow: 'slow', from: '2026-03-02T05:00:00Z', attempts: [{ status: 'hangs' }] },
        ],
        policyChanges: [
          { at: '2026-03-01T01:30:00Z', workflow: 'hourly', policy: { alertAfter: 3, retries: 0 } },
          { at: '2026-03-01T04:30:00Z', workflow: 'hourly', policy: { alertAfter: 3, retries: 0, recoverAfter: 2 } },
        ],
      },
      'acme',
    );
    // Each event carries the version it was decided under: opened under v2, escalated and resolved under v3.
    expect(r.lived.events).toContain('2026-03-01T02:01:00.000Z hourly opened v2');
    expect(r.lived.events).toContain('2026-03-01T12:01:00.000Z hourly resolved v3');
    expect(r.replayed).toEqual(r.lived);
  });
});
