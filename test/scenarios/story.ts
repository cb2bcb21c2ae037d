import { expect } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { escalateAtFor } from '../../src/domain/evaluate.js';
import { fireTimesAfter, nextFireAfter } from '../../src/domain/schedule.js';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, replay, tickRows } from './support.js';

/**
 * One story, told in every zone and cadence the product is judged in: a
 * managed workflow fails, each failed tick is retried as its cadence says,
 * the alert opens at the cadence's confirmed count with its first severity,
 * a warning escalates when it keeps failing or at opened_at + multiplier ×
 * cadence (whichever is first), and the next success resolves it. Every
 * instant is worked out from the schedule here and checked against the
 * ledger the real engine wrote on the replay's virtual clock.
 */

export const ZONES = [
  'UTC',
  'Etc/GMT+5', // POSIX sign: UTC−5
  'Asia/Kathmandu', // +05:45
  'Asia/Kolkata', // +05:30
  'Pacific/Chatham', // +12:45 in June
  'America/St_Johns', // −02:30 in June
  'Pacific/Kiritimati', // +14
  'Pacific/Pago_Pago', // −11
  'Asia/Almaty', // +06 → +05 by law on 1 March 2024
  'America/Mexico_City', // DST abolished by law in 2022
];

/** Monday 15 June 2026, midnight UTC: no zone above changes its offset in the weeks after. */
const REFERENCE = new Date('2026-06-15T00:00:00Z');
const MINUTE = 60_000;
const ATTEMPT_MS = 60_000; // a replayed attempt lasts a minute
const TENANTS = [{ id: 'acme', name: 'Acme', channel: 'CACME' }];

export interface Case {
  cron: string;
  /** The story starts just before this local wall time (a cron naming it) following REFERENCE. */
  from: string;
  /** No scheduled success within the replay's reach (a month at most): Run now is the next success. */
  runNow?: boolean;
  /** Looked for from here instead of REFERENCE (a leap day). */
  reference?: string;
}

export const CASES: Case[] = [
  { cron: '* * * * *', from: '58 23 * * *' }, // across local midnight
  { cron: '*/7 * * * *', from: '45 10 * * *' }, // :49, :56, then 4 minutes to :00
  { cron: '*/5 9-17 * * 1-5', from: '40 17 * * 1' }, // the streak spans the night
  { cron: '0 * * * *', from: '30 22 * * *' },
  { cron: '@hourly', from: '30 22 * * *' },
  { cron: '0 */3 * * *', from: '0 22 * * *' },
  { cron: '0 9 * * 1-5', from: '0 8 * * 5' }, // fails Friday, resolves Monday
  { cron: '@daily', from: '0 23 * * *' },
  { cron: '0 0 * * 0', from: '0 23 * * 6' },
  { cron: '@weekly', from: '0 23 * * 6' },
  { cron: '0 0 1 * *', from: '0 23 28-31 * *', runNow: true },
  { cron: '0 0 31 * *', from: '0 23 30 * *', runNow: true }, // July 31st: June has none
  { cron: '0 0 29 2 *', from: '0 23 28 2 *', runNow: true, reference: '2027-06-01T00:00:00Z' }, // 2028: three years without one
  { cron: '0 0 1 1 *', from: '0 23 31 12 *', runNow: true },
];

interface Expected {
  ticks: Date[];
  failing: number;
  openedAt: Date;
  escalatedAt: Date | null;
  resolvedAt: Date;
  until: Date;
}

/** What the story must look like, from the schedule and the cadence profile alone. */
function expectedStory(c: Case, tz: string, start: Date): Expected & { p: ReturnType<typeof profileFor> } {
  const p = profileFor(c.cron, tz, {}, start);
  const confirmed = (tick: Date) => new Date(tick.getTime() + (p.retries + 1) * ATTEMPT_MS);
  // A warning keeps failing until it escalates by the count (or its deadline comes first); a critical fails its count.
  const failing = p.firstSeverity === 'warning' ? 2 * p.alertAfter : p.alertAfter;
  const ticks = fireTimesAfter(c.cron, tz, start, failing + 1);
  const openedAt = confirmed(ticks[p.alertAfter - 1]!);
  let escalatedAt: Date | null = null;
  if (p.firstSeverity === 'warning') {
    const deadline = escalateAtFor(openedAt, 'warning', p.escalationMultiplier, p.cadenceSeconds, { cron: c.cron, timezone: tz })!;
    // The escalation clock looks once a minute from the start: it escalates at its first look at or after the deadline, or after the failure that made the count.
    const due = Math.min(deadline.getTime(), confirmed(ticks[failing - 1]!).getTime());
    escalatedAt = new Date(start.getTime() + Math.ceil((due - start.getTime()) / MINUTE) * MINUTE);
  }
  const runNowAt = new Date(openedAt.getTime() + 3_600_000);
  const resolvedAt = c.runNow ? new Date(runNowAt.getTime() + ATTEMPT_MS) : new Date(ticks[failing]!.getTime() + ATTEMPT_MS);
  return { p, ticks: c.runNow ? ticks.slice(0, failing) : ticks, failing, openedAt, escalatedAt, resolvedAt, until: new Date(resolvedAt.getTime() + 5 * MINUTE) };
}

export async function tellStory(c: Case, tz: string) {
  const start = new Date(nextFireAfter(c.from, tz, c.reference ? new Date(c.reference) : REFERENCE).getTime() - MINUTE / 2);
  const x = expectedStory(c, tz, start);
  const lastFailing = x.ticks[x.failing - 1]!;
  const { db, transcript } = await replay(
    {
      start: start.toISOString(),
      until: x.until.toISOString(),
      platformChannel: 'CPLATFORM',
      tenants: TENANTS,
      workflows: [{ tenant: 'acme', name: 'job', cron: c.cron, timezone: tz, mode: 'managed' }],
      outcomes: [{ workflow: 'job', from: start.toISOString(), to: lastFailing.toISOString(), attempts: [{ status: 'failed', error: 'upstream unavailable' }] }],
      actions: c.runNow ? [{ at: new Date(x.openedAt.getTime() + 3_600_000).toISOString(), user: 'UOPS', channel: 'CACME', workflow: 'job', action: 'run_now' }] : [],
    },
    // Long cadences leave a critical open for days: a coarse escalation grid keeps them quick (a critical never escalates).
    { escalationIntervalSeconds: x.p.firstSeverity === 'critical' ? 3600 : 60 },
  );
  const label = `${c.cron} in ${tz}`;
  const want = x.ticks.map((t, i) => `${t.toISOString().slice(0, 16)} ${i < x.failing ? 'failed' : 'succeeded'}`);
  const rows = await tickRows(db, 'job', true);
  expect(rows.slice(0, want.length), label).toEqual(want.map((w) => w.slice(5)));
  // A tick after the story's last one may have fired before the replay ended: it did not fail.
  for (const later of rows.slice(want.length)) expect(later, label).toMatch(/ (succeeded|running)$/);
  const retries = await db.selectFrom('runs').select('id').where('originalRunId', 'is not', null).execute();
  expect(retries, `${label}: ${x.p.retries} retries per failed tick`).toHaveLength(x.p.retries * x.failing);
  expect(await db.selectFrom('runs').select('tick').where('status', 'in', ['missed', 'skipped']).execute(), label).toEqual([]);

  const alerts = await alertsOf(db, 'job');
  expect(alerts, label).toHaveLength(1);
  const [alert] = alerts;
  expect(alert!.cadenceSeconds, label).toBe(x.p.cadenceSeconds);
  expect(alert!.severity, label).toBe(x.escalatedAt ? 'critical' : x.p.firstSeverity);
  expect(alert!.openedAt.toISOString(), `${label}: opened at the ${x.p.alertAfter}. confirmed failure`).toBe(x.openedAt.toISOString());
  expect(alert!.escalatedAt?.toISOString() ?? null, `${label}: escalated`).toBe(x.escalatedAt?.toISOString() ?? null);
  expect(alert!.resolvedAt?.toISOString(), `${label}: resolved on the next success`).toBe(x.resolvedAt.toISOString());
  const story = storyByChannel(threadsOf(transcript.calls)).CACME;
  const told = x.escalatedAt ? ['opened', 'escalated', 'resolved'] : ['opened', 'resolved'];
  expect(story?.job?.[0]?.filter((k) => told.includes(k)), label).toEqual(told);
  expect(story?.job?.[0]?.[0], label).toBe('opened');
  return { alert: alert!, x };
}

