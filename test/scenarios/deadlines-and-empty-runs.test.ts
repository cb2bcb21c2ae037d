import { describe, expect, it } from 'vitest';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, replay, tickRows } from './support.js';

/**
 * What a job's local clock does to its deadlines, and runs that succeed
 * without doing anything: an on-call person reads the zone's wall clock, not
 * UTC, and a green run that wrote nothing is not a success.
 */

const SUR = { id: 'sur', name: 'Sur', channel: 'CSUR' };

describe('a completion deadline on the zone\'s wall clock', { timeout: 120_000 }, () => {
  it('Santiago spring-forward: the 00:30 job runs at 01:30 (00:30 does not exist), its 100 minutes end after 03:00, and it pages once at 03:00 -03, naming the zone', async () => {
    // 6 Sep 2026 00:00 CLT (-04) is 01:00 CLST (-03). Every night the run starts at 04:30 UTC and takes 100 minutes;
    // the 03:00 deadline is 07:00 UTC on ordinary nights, 06:00 UTC on this one.
    const { db, transcript } = await replay(
      {
        start: '2026-09-04T03:00:00Z',
        until: '2026-09-06T12:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [SUR],
        workflows: [{ tenant: 'sur', name: 'settlement', cron: '30 0 * * *', timezone: 'America/Santiago', mode: 'managed', policy: { completeBy: { time: '03:00' } } }],
        outcomes: [{ workflow: 'settlement', durationSeconds: 6000, attempts: [{ status: 'succeeded', rows: 1200 }] }],
      },
      { escalationIntervalSeconds: 300 },
    );
    expect(await tickRows(db, 'settlement', true)).toEqual(['09-04T04:30 succeeded', '09-05T04:30 succeeded', '09-06T04:30 succeeded']);
    const [alert, ...others] = await alertsOf(db);
    expect(others).toEqual([]);
    // A daily job's first severity: critical, opened at the deadline while the run still goes; its success resolves it.
    expect(alert).toMatchObject({ workflow: 'settlement', severity: 'critical', status: 'resolved' });
    expect(alert!.openedAt.toISOString()).toBe('2026-09-06T06:00:00.000Z');
    expect(alert!.resolvedAt!.toISOString()).toBe('2026-09-06T06:10:00.000Z');
    const story = storyByChannel(threadsOf(transcript.calls));
    for (const channel of ['CSUR', 'CPLATFORM']) expect(story[channel], channel).toEqual({ settlement: [['opened', 'resolved']] });
    const opening = transcript.calls.find((c) => c.channel === 'CSUR' && c.thread_ts === null)!;
    const said = `${opening.text} ${JSON.stringify(opening.blocks)}`;
    expect(said).toMatch(/missed its completion deadline/);
    // The times the schedule names are read on Santiago's clock, with the zone: the deadline 03:00, the tick 01:30.
    expect(said).toMatch(/03:00[^"]{0,40}America\/Santiago/);
    expect(said).toMatch(/01:30[^"]{0,40}America\/Santiago/);
    expect(said).toMatch(/still running/);
  });
});

describe('runs that succeed without doing anything, around a maintenance window', { timeout: 120_000 }, () => {
  it('a nightly export with minRows: empty inside the window is not held against it; empty the next night pages at once as "empty output"; rows again resolve it', async () => {
    const { db, transcript } = await replay(
      {
        start: '2026-03-09T23:00:00Z',
        until: '2026-03-12T03:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [SUR],
        // 02:00 in Berlin (CET) is 01:00 UTC.
        workflows: [{ tenant: 'sur', name: 'export', cron: '0 2 * * *', timezone: 'Europe/Berlin', mode: 'managed', policy: { minRows: 1 } }],
        outcomes: [
          { workflow: 'export', from: '2026-03-10T00:00:00Z', to: '2026-03-11T23:00:00Z', attempts: [{ status: 'succeeded', rows: 0 }] },
          { workflow: 'export', attempts: [{ status: 'succeeded', rows: 5400 }] },
        ],
        // The source database is upgraded the first night: the export finds nothing, as expected.
        maintenance: [{ at: '2026-03-09T23:30:00Z', tenant: 'sur', workflow: 'export', startsAt: '2026-03-10T00:30:00Z', endsAt: '2026-03-10T03:00:00Z', reason: 'source DB upgrade' }],
      },
      { escalationIntervalSeconds: 300 },
    );
    const rows = await db.selectFrom('runs').select(['tick', 'status', 'error', 'inMaintenance']).where('originalRunId', 'is', null).orderBy('tick').execute();
    expect(rows.map((r) => [r.tick!.toISOString().slice(5, 16), r.status, r.inMaintenance])).toEqual([
      ['03-10T01:00', 'failed', true],
      ['03-11T01:00', 'failed', false],
      ['03-12T01:00', 'succeeded', false],
    ]);
    expect(rows[1]!.error).toMatch(/empty output/);
    const [alert, ...others] = await alertsOf(db);
    expect(others).toEqual([]);
    // The first night's empty run is not counted: one failure, the second night's, after its three retries.
    expect(alert).toMatchObject({ severity: 'critical', status: 'resolved', consecutiveFailures: 1 });
    expect(alert!.openedAt.toISOString()).toBe('2026-03-11T01:04:00.000Z');
    expect(alert!.resolvedAt!.toISOString()).toBe('2026-03-12T01:01:00.000Z');
    expect(storyByChannel(threadsOf(transcript.calls)).CSUR).toEqual({ export: [['opened', 'resolved']] });
  });
});

describe('a five-minute check that returns at once', { timeout: 120_000 }, () => {
  it('too fast inside a maintenance window is not held against it; after it, the third too-fast run opens one warning, and later ones do not each post a reply', async () => {
    const { db, transcript } = await replay(
      {
        start: '2026-03-10T00:00:00Z',
        until: '2026-03-10T01:30:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [SUR],
        workflows: [{ tenant: 'sur', name: 'freshness-check', cron: '*/5 * * * *', timezone: 'America/Santiago', policy: { minDurationSeconds: 30 } }],
        // It finds no rows to check and returns in two seconds, from 00:05 to 01:00.
        outcomes: [{ workflow: 'freshness-check', from: '2026-03-10T00:05:00Z', to: '2026-03-10T01:00:00Z', durationSeconds: 2, attempts: [{ status: 'succeeded' }] }],
        maintenance: [{ at: '2026-03-10T00:00:00Z', tenant: 'sur', workflow: 'freshness-check', startsAt: '2026-03-10T00:00:00Z', endsAt: '2026-03-10T00:30:00Z', reason: 'warehouse reload' }],
      },
      { escalationIntervalSeconds: 60 },
    );
    const ticks = await tickRows(db, 'freshness-check');
    expect(ticks.slice(0, 14)).toEqual([
      '00:00 succeeded',
      ...['00:05', '00:10', '00:15', '00:20', '00:25', '00:30', '00:35', '00:40', '00:45', '00:50', '00:55', '01:00'].map((t) => `${t} failed`),
      '01:05 succeeded',
    ]);
    const [alert, ...others] = await alertsOf(db);
    expect(others).toEqual([]);
    // 00:30, 00:35, 00:40: the third confirmed failure after the window opens it (each run ends two seconds in).
    expect(alert!.openedAt.toISOString()).toBe('2026-03-10T00:40:02.000Z');
    expect(alert).toMatchObject({ status: 'resolved', consecutiveFailures: 7 });
    const thread = storyByChannel(threadsOf(transcript.calls)).CSUR!['freshness-check']![0]!;
    expect(thread[0]).toBe('opened');
    expect(thread.at(-1)).toBe('resolved');
    // Four more too-fast runs while it is open: the root's count says so; at most one reply tells what "too fast" is.
    expect(thread.filter((e) => e === 'too_fast').length).toBeLessThanOrEqual(1);
  });
});

describe('an hourly job that hangs', { timeout: 120_000 }, () => {
  it('a hang its retry gets past tells nobody; two ticks hung on every attempt open one warning "timed out" at the second\'s last timeout; the next success resolves it', async () => {
    const { db, transcript } = await replay(
      {
        start: '2026-03-10T00:30:00Z',
        until: '2026-03-10T05:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [SUR],
        workflows: [{ tenant: 'sur', name: 'sync', cron: '0 * * * *', timezone: 'America/Santiago', mode: 'managed', policy: { timeoutSeconds: 900 } }],
        outcomes: [
          { workflow: 'sync', from: '2026-03-10T01:00:00Z', to: '2026-03-10T01:00:00Z', attempts: [{ status: 'hangs' }, { status: 'succeeded' }] },
          { workflow: 'sync', from: '2026-03-10T02:00:00Z', to: '2026-03-10T03:00:00Z', attempts: [{ status: 'hangs' }] },
        ],
      },
      { escalationIntervalSeconds: 60 },
    );
    expect((await tickRows(db, 'sync')).slice(0, 4)).toEqual(['01:00 succeeded', '02:00 failed', '03:00 failed', '04:00 succeeded']);
    const first = await db.selectFrom('runs').select(['outcomeNote']).where('tick', '=', new Date('2026-03-10T01:00:00Z')).where('originalRunId', 'is', null).executeTakeFirstOrThrow();
    expect(first.outcomeNote).toMatch(/recovered on attempt 2/);
    const [alert, ...others] = await alertsOf(db);
    expect(others).toEqual([]);
    // Each hung tick: three attempts of 15 minutes (the first and two immediate retries); the second hung tick opens it.
    expect(alert).toMatchObject({ severity: 'warning', status: 'resolved', consecutiveFailures: 2, lastError: 'timed out' });
    expect(alert!.openedAt.toISOString()).toBe('2026-03-10T03:45:00.000Z');
    expect(alert!.resolvedAt!.toISOString()).toBe('2026-03-10T04:01:00.000Z');
    for (const channel of ['CSUR', 'CPLATFORM']) expect(storyByChannel(threadsOf(transcript.calls))[channel], channel).toEqual({ sync: [['opened', 'resolved']] });
  });
});
