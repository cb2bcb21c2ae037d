import { describe, expect, it } from 'vitest';
import { fireTimesBetween, latestFireAtOrBefore, nextFireAfter } from '../../src/domain/schedule.js';
import { profileFor } from '../../src/domain/cadence.js';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, replay, tickRows } from './support.js';

/**
 * DST and odd offsets, through the schedule and through the real engine:
 * every tick fires once, none is reported missed or doubled, and deadlines
 * are measured in real time.
 */

const utc = (times: Date[]) => times.map((d) => d.toISOString().slice(5, 16));

describe('fire times across transitions', () => {
  it('Lord Howe fall-back (30 minutes back at 02:00): an hourly job neither throws nor goes backwards', () => {
    // 01:00 LHDT is 14:00 UTC; clocks go back from 02:00 LHDT to 01:30 LHST at 15:00 UTC; 02:00 LHST is 15:30 UTC.
    const from = new Date('2026-04-04T13:30:00Z');
    expect(utc(fireTimesBetween('0 * * * *', 'Australia/Lord_Howe', from, new Date('2026-04-04T17:00:00Z')))).toEqual(['04-04T14:00', '04-04T15:30', '04-04T16:30']);
    expect(nextFireAfter('0 * * * *', 'Australia/Lord_Howe', new Date('2026-04-04T14:10:00Z')).toISOString()).toBe('2026-04-04T15:30:00.000Z');
    expect(nextFireAfter('15 * * * *', 'Australia/Lord_Howe', new Date('2026-04-04T14:15:00Z')).toISOString()).toBe('2026-04-04T15:45:00.000Z');
    // The profile samples 64 fire times ahead: days before the night it crossed the throw.
    expect(profileFor('0 * * * *', 'Australia/Lord_Howe', {}, new Date('2026-04-02T00:00:00Z')).cadenceSeconds).toBe(3600);
    expect(profileFor('0 */6 * * *', 'Australia/Lord_Howe', {}, new Date('2026-04-01T00:00:00Z')).cadenceSeconds).toBe(21_600);
  });

  it('Lord Howe spring-forward (02:00 → 02:30): 02:30 exists and fires; the missing 02:00 fires at 02:30, once', () => {
    // 01:30 LHST is 15:00 UTC; 02:30 LHDT is 15:30 UTC; 03:00 LHDT is 16:00 UTC.
    expect(utc(fireTimesBetween('*/30 * * * *', 'Australia/Lord_Howe', new Date('2026-10-03T14:45:00Z'), new Date('2026-10-03T16:00:00Z')))).toEqual(['10-03T15:00', '10-03T15:30', '10-03T16:00']);
    expect(utc(fireTimesBetween('0 * * * *', 'Australia/Lord_Howe', new Date('2026-10-03T14:00:00Z'), new Date('2026-10-03T16:30:00Z')))).toEqual(['10-03T14:30', '10-03T15:30', '10-03T16:00']);
  });

  it('Chatham (+12:45/+13:45): a job at 02:45, the instant clocks jump, keeps its day; */15 never goes backwards on fall-back', () => {
    // 27 Sep 2026: 02:45 CHAST becomes 03:45 CHADT at 14:00 UTC on the 26th.
    expect(utc(fireTimesBetween('45 2 * * *', 'Pacific/Chatham', new Date('2026-09-25T00:00:00Z'), new Date('2026-09-28T00:00:00Z')))).toEqual(['09-25T14:00', '09-26T14:00', '09-27T13:00']);
    expect(latestFireAtOrBefore('45 2 * * *', 'Pacific/Chatham', new Date('2026-09-26T14:10:00Z'))?.toISOString()).toBe('2026-09-26T14:00:00.000Z');
    // 5 Apr 2026: 03:45 CHADT goes back to 02:45 CHAST at 14:00 UTC on the 4th.
    const quarter = fireTimesBetween('*/15 * * * *', 'Pacific/Chatham', new Date('2026-04-04T12:00:00Z'), new Date('2026-04-04T16:00:00Z'));
    expect(quarter).toHaveLength(16);
    quarter.forEach((t, i) => i > 0 && expect(t.getTime() - quarter[i - 1]!.getTime()).toBe(15 * 60_000));
  });

  it('the latest fire time agrees with the next one where a gap moved the tick (Berlin and Los Angeles spring-forward)', () => {
    // 02:30 does not exist; the job fires at 03:30 local. Ingest and ping matching look the tick up with this.
    expect(latestFireAtOrBefore('30 2 * * *', 'Europe/Berlin', new Date('2026-03-29T01:30:00Z'))?.toISOString()).toBe('2026-03-29T01:30:00.000Z');
    expect(latestFireAtOrBefore('30 2 * * *', 'America/Los_Angeles', new Date('2026-03-08T10:40:00Z'))?.toISOString()).toBe('2026-03-08T10:30:00.000Z');
  });

  it('a repeated hour: a fixed-time job fires once, an hourly or half-hourly one keeps its real spacing', () => {
    const la = (cron: string) => utc(fireTimesBetween(cron, 'America/Los_Angeles', new Date('2026-11-01T07:00:00Z'), new Date('2026-11-01T11:00:00Z')));
    expect(la('30 1 * * *')).toEqual(['11-01T08:30']);
    expect(la('0 * * * *')).toEqual(['11-01T08:00', '11-01T09:00', '11-01T10:00', '11-01T11:00']);
    expect(la('*/30 * * * *')).toHaveLength(8);
  });
});

type Zone = { tz: string; start: string; until: string; daily: string[] };

/**
 * Observed workflows (the outside scheduler reports each tick through the
 * ingest API, which checks it is a fire time) and managed ones (the bot's
 * tick scheduler), all succeeding: a `30 2` job, an hourly job and a `*\/30`
 * job. Nothing may be missed, doubled, skipped or alerted.
 */
const NIGHTS: Zone[] = [
  { tz: 'America/Los_Angeles', start: '2026-03-08T06:00:00Z', until: '2026-03-08T14:00:00Z', daily: ['03-08T10:30'] },
  { tz: 'America/Los_Angeles', start: '2026-11-01T06:00:00Z', until: '2026-11-01T14:00:00Z', daily: ['11-01T10:30'] },
  { tz: 'Europe/Berlin', start: '2026-03-28T22:00:00Z', until: '2026-03-29T05:00:00Z', daily: ['03-29T01:30'] },
  { tz: 'Europe/Berlin', start: '2026-10-24T22:00:00Z', until: '2026-10-25T05:00:00Z', daily: ['10-25T00:30'] },
  { tz: 'Asia/Kolkata', start: '2026-03-09T18:00:00Z', until: '2026-03-10T01:00:00Z', daily: ['03-09T21:00'] },
  { tz: 'Australia/Lord_Howe', start: '2026-04-04T12:00:00Z', until: '2026-04-04T19:00:00Z', daily: ['04-04T16:00'] },
  { tz: 'Australia/Lord_Howe', start: '2026-10-03T12:00:00Z', until: '2026-10-03T19:00:00Z', daily: ['10-03T15:30'] },
  { tz: 'Pacific/Chatham', start: '2026-04-04T10:00:00Z', until: '2026-04-04T17:00:00Z', daily: ['04-04T12:45'] },
  { tz: 'Pacific/Chatham', start: '2026-09-26T10:00:00Z', until: '2026-09-26T17:00:00Z', daily: ['09-26T13:45'] },
];

describe('a night in each zone through the real engine', { timeout: 300_000 }, () => {
  for (const night of NIGHTS) {
    for (const mode of ['observed', 'managed'] as const) {
      it(`${night.tz} ${night.start.slice(0, 10)}, ${mode}: every tick once, none missed, no alert`, async () => {
        const workflows = [
          { tenant: 'acme', name: 'nightly', cron: '30 2 * * *', timezone: night.tz, mode },
          { tenant: 'acme', name: 'hourly', cron: '0 * * * *', timezone: night.tz, mode },
          { tenant: 'acme', name: 'half-hourly', cron: '*/30 * * * *', timezone: night.tz, mode },
        ];
        const { db, transcript } = await replay({
          start: night.start,
          until: night.until,
          platformChannel: 'CPLATFORM',
          tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
          workflows,
        });
        const start = new Date(new Date(night.start).getTime() - 1);
        for (const w of workflows) {
          // A run takes a minute: one that starts in the last minute is still running at `until`.
          const expected = fireTimesBetween(w.cron, w.timezone, start, new Date(night.until)).map(
            (t) => `${t.toISOString().slice(5, 16)} ${t.getTime() + 60_000 <= new Date(night.until).getTime() ? 'succeeded' : 'running'}`,
          );
          expect(await tickRows(db, w.name, true), w.name).toEqual(expected);
        }
        expect(await tickRows(db, 'nightly', true)).toEqual(night.daily.map((d) => `${d} succeeded`));
        expect(transcript.calls).toEqual([]);
        expect(transcript.summary).toMatchObject({ alerts: 0, failedTicks: 0 });
      });
    }
  }

  it('an hourly job failing through Lord Howe fall-back: one warning, escalation deadline three real hours after it opened', async () => {
    const { db, transcript } = await replay({
      start: '2026-04-04T12:30:00Z',
      until: '2026-04-04T22:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
      workflows: [{ tenant: 'acme', name: 'hourly', cron: '0 * * * *', timezone: 'Australia/Lord_Howe' }],
      outcomes: [{ workflow: 'hourly', from: '2026-04-04T13:00:00Z', to: '2026-04-04T17:00:00Z', attempts: [{ status: 'failed', error: 'db locked' }] }],
      // Ownership is taken after the deadline has been checked, so only the clock (not the failure count) decides it here.
    });
    // 13:00, 14:00 (LHDT), 15:30, 16:30 (LHST) fail, each after its two retries; 17:30 succeeds.
    expect(await tickRows(db, 'hourly')).toEqual(['13:00 failed', '14:00 failed', '15:30 failed', '16:30 failed', '17:30 succeeded', '18:30 succeeded', '19:30 succeeded', '20:30 succeeded', '21:30 succeeded']);
    const [alert] = await alertsOf(db);
    expect(alert).toMatchObject({ status: 'resolved', cadenceSeconds: 3600 });
    expect(alert!.escalateAt!.getTime() - alert!.openedAt.getTime()).toBe(3 * 3_600_000);
    for (const channel of ['CACME', 'CPLATFORM']) {
      const story = storyByChannel(threadsOf(transcript.calls))[channel]!;
      expect(Object.keys(story)).toEqual(['hourly']);
      expect(story.hourly).toHaveLength(1);
      expect(story.hourly![0]![0]).toBe('opened');
      expect(story.hourly![0]!.at(-1)).toBe('resolved');
    }
  });

  it('a daily observed job that never reports on Berlin spring-forward night is skipped, not missed: a Kubernetes CronJob does not run 02:30 that night', async () => {
    const { db } = await replay({
      start: '2026-03-28T22:00:00Z',
      until: '2026-03-29T05:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants: [{ id: 'hansa', name: 'Hansa', channel: 'CHANSA' }],
      workflows: [{ tenant: 'hansa', name: 'nightly', cron: '30 2 * * *', timezone: 'Europe/Berlin' }],
      outcomes: [{ workflow: 'nightly', attempts: [{ status: 'missing' }] }],
    });
    // Judged at 03:30 CEST + half an hour's grace, with the reason on the row; a daily job's missed tick would have paged.
    expect(await tickRows(db, 'nightly')).toEqual(['01:30 skipped']);
    const [row] = await db.selectFrom('runs').select(['outcomeNote', 'finishedAt']).execute();
    expect(row!.outcomeNote).toMatch(/^DST: 02:30 did not exist in Europe\/Berlin \(02:00 → 03:00\)/);
    expect(row!.finishedAt!.toISOString()).toBe('2026-03-29T02:00:00.000Z');
    expect(await alertsOf(db)).toEqual([]);
  });

  it('the same job silent the night before is missed, and pages at once', async () => {
    const { db } = await replay({
      start: '2026-03-27T22:00:00Z',
      until: '2026-03-28T05:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants: [{ id: 'hansa', name: 'Hansa', channel: 'CHANSA' }],
      workflows: [{ tenant: 'hansa', name: 'nightly', cron: '30 2 * * *', timezone: 'Europe/Berlin' }],
      outcomes: [{ workflow: 'nightly', attempts: [{ status: 'missing' }] }],
    });
    expect(await tickRows(db, 'nightly')).toEqual(['01:30 missed']);
    const [alert] = await alertsOf(db);
    expect(alert).toMatchObject({ severity: 'critical', status: 'open' });
    expect(alert!.openedAt.toISOString()).toBe('2026-03-28T02:00:00.000Z');
  });
});
