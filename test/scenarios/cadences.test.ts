import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { nextFireAfter } from '../../src/domain/schedule.js';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, eventKinds, replay, tickRows } from './support.js';

const FRIDAY = new Date('2026-03-06T12:00:00Z');
const TENANT = [{ id: 'acme', name: 'Acme', channel: 'CACME' }];

describe('cadence profiles', () => {
  it('are monotonic from every minute to monthly, and a weekday cron reads as daily', () => {
    const crons = ['* * * * *', '*/15 * * * *', '*/30 * * * *', '0 * * * *', '0 */6 * * *', '@daily', '0 3 * * 0', '0 4 1 * *'];
    const ps = crons.map((c) => profileFor(c, 'UTC', {}, FRIDAY));
    expect(ps.map((p) => p.cadenceSeconds)).toEqual([60, 900, 1800, 3600, 21_600, 86_400, 604_800, 2_678_400]);
    for (let i = 1; i < ps.length; i++) {
      const [a, b] = [ps[i - 1]!, ps[i]!];
      expect(b.retries, crons[i]).toBeGreaterThanOrEqual(a.retries);
      expect(b.alertAfter, crons[i]).toBeLessThanOrEqual(a.alertAfter);
      expect(b.escalationMultiplier, crons[i]).toBeLessThanOrEqual(a.escalationMultiplier);
      expect(b.graceSeconds, crons[i]).toBeGreaterThanOrEqual(a.graceSeconds);
      expect(b.timeoutSeconds, crons[i]).toBeGreaterThanOrEqual(a.timeoutSeconds);
      // A run may not be given longer than the gap to its next tick, nor a tick longer than that to start.
      expect(b.timeoutSeconds).toBeLessThanOrEqual(b.cadenceSeconds);
      expect(b.graceSeconds).toBeLessThan(b.cadenceSeconds);
    }
    const weekday = profileFor('0 9 * * 1-5', 'America/Los_Angeles', {}, FRIDAY);
    const { derived: _d, overrides: _o, ...daily } = profileFor('@daily', 'UTC', {}, FRIDAY);
    expect(weekday).toMatchObject(daily);
  });
});

describe('cadences through the real engine', { timeout: 120_000 }, () => {
  it('a weekday job: the weekend is no missed tick, and a warning opened on Friday escalates on Monday, not Saturday', async () => {
    const { db, transcript } = await replay({
      start: '2026-03-05T00:00:00Z',
      until: '2026-03-10T12:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants: TENANT,
      workflows: [
        // Observed, so the freshness detector watches every tick (a weekend tick it expected would be missed).
        { tenant: 'acme', name: 'report', cron: '0 9 * * 1-5', mode: 'observed' },
        { tenant: 'acme', name: 'report-warn', cron: '0 9 * * 1-5', mode: 'observed', policy: { firstSeverity: 'warning' } },
      ],
      outcomes: [
        { workflow: 'report', from: '2026-03-06T09:00:00Z', to: '2026-03-06T09:00:00Z', attempts: [{ status: 'failed', error: 'export failed' }] },
        { workflow: 'report-warn', from: '2026-03-06T09:00:00Z', to: '2026-03-09T09:00:00Z', attempts: [{ status: 'failed', error: 'export failed' }] },
      ],
    }, { escalationIntervalSeconds: 240 });
    expect(await tickRows(db, 'report', true)).toEqual(['03-05T09:00 succeeded', '03-06T09:00 failed', '03-09T09:00 succeeded', '03-10T09:00 succeeded']);
    const [critical, warning] = await alertsOf(db);
    expect(critical).toMatchObject({ workflow: 'report', severity: 'critical', status: 'resolved', escalateAt: null });
    expect(critical!.resolvedAt!.toISOString().slice(0, 10)).toBe('2026-03-09');
    // Opened Friday 09:04 (the tick's four attempts, a minute each); one cadence of schedule time later is Monday 09:04.
    expect(warning!.openedAt.toISOString()).toBe('2026-03-06T09:04:00.000Z');
    expect(warning!.escalateAt!.toISOString()).toBe('2026-03-09T09:04:00.000Z');
    // Monday's tick fails too: it escalates then (by the clock or by the count, both on Monday), and resolves on Tuesday.
    expect(warning!.escalatedAt!.toISOString().slice(0, 10)).toBe('2026-03-09');
    expect(await eventKinds(db, warning!.id)).toEqual(expect.arrayContaining(['opened', 'escalated', 'resolved']));
    const story = storyByChannel(threadsOf(transcript.calls));
    expect(story.CACME).toEqual({ report: [['opened', 'resolved']], 'report-warn': [['opened', 'escalated', 'resolved']] });
    expect(await db.selectFrom('runs').select('id').where('status', 'in', ['missed', 'skipped']).execute()).toEqual([]);
  });

  it('a weekday warning that is not failing again stays a warning over the weekend', async () => {
    const { db } = await replay({
      start: '2026-03-06T08:00:00Z',
      until: '2026-03-09T08:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants: TENANT,
      workflows: [{ tenant: 'acme', name: 'report-warn', cron: '0 9 * * 1-5', policy: { firstSeverity: 'warning', retries: 0 } }],
      outcomes: [{ workflow: 'report-warn', from: '2026-03-06T09:00:00Z', to: '2026-03-06T09:00:00Z', attempts: [{ status: 'failed', error: 'export failed' }] }],
    }, { escalationIntervalSeconds: 240 });
    const [alert] = await alertsOf(db);
    expect(alert).toMatchObject({ status: 'open', severity: 'warning', escalatedAt: null });
  });

  for (const [cron, start, until, ticks] of [
    ['* * * * *', '2026-03-09T23:59:00Z', '2026-03-10T00:30:00Z', 30],
    ['*/15 * * * *', '2026-03-09T23:59:00Z', '2026-03-10T06:00:00Z', 24],
    ['0 */6 * * *', '2026-03-09T23:59:00Z', '2026-03-13T00:00:00Z', 12],
    ['@daily', '2026-03-09T23:59:00Z', '2026-03-20T00:00:00Z', 10],
    ['0 3 * * 0', '2026-03-14T23:59:00Z', '2026-03-29T04:00:00Z', 3],
    ['0 4 1 * *', '2026-03-31T23:59:00Z', '2026-05-01T05:00:00Z', 2],
  ] as const) {
    it(`${cron}: a healthy stretch fires each tick once, and one failed tick alerts only if the cadence says one is enough`, async () => {
      // A critical alert stays open a whole cadence: a coarse escalation grid keeps weeks of replay quick (critical never escalates).
      const { db, transcript } = await replay({
        start,
        until,
        platformChannel: 'CPLATFORM',
        tenants: TENANT,
        workflows: [{ tenant: 'acme', name: 'job', cron }],
        // Only the first tick fails.
        outcomes: [{ workflow: 'job', from: start, to: nextFireAfter(cron, 'UTC', new Date(start)).toISOString(), attempts: [{ status: 'failed', error: 'once' }] }],
      }, { escalationIntervalSeconds: 3600 });
      const rows = await tickRows(db, 'job', true);
      expect(new Set(rows.map((r) => r.split(' ')[0])).size).toBe(rows.length);
      expect(rows.length).toBeGreaterThanOrEqual(ticks);
      const profile = profileFor(cron, 'UTC', {}, new Date(start));
      // The one failure is on every row's own tick after all retries (its first attempt and `retries` more).
      const attempts = await db.selectFrom('runs').select('id').where('originalRunId', 'is not', null).execute();
      expect(attempts).toHaveLength(profile.retries);
      expect(transcript.summary.alerts).toBe(profile.alertAfter === 1 ? 1 : 0);
      if (profile.alertAfter === 1) {
        expect(storyByChannel(threadsOf(transcript.calls)).CACME).toEqual({ job: [['opened', 'resolved']] });
      }
    });
  }
});
