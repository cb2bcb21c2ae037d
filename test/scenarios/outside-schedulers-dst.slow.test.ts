import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextFireAfter } from '../../src/domain/schedule.js';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { outsideStarts, type OutsideScheduler } from './outside-schedulers.js';

/**
 * Observed jobs through a DST night, run by the schedulers people really use
 * (cron, and a Kubernetes CronJob), which disagree on what a cron does then
 * (src/domain/observed-dst.ts). Each job succeeds every time its scheduler
 * starts it and says so with a ping (no tick named). A tick a reasonable
 * scheduler may not run, and did not, is `skipped` with a DST note; none of
 * the jobs is ever missed or alerted on; a second run in a repeated hour is
 * an external run. A job that never runs at all (`broken`, hourly) is still
 * missed on every tick every scheduler runs, and alerted on.
 */

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

const HOUR = 3_600_000;

interface Night {
  tz: string;
  change: string;
  daily: string;
  /** The reporting jobs' ticks recorded skipped, by scheduler (`workflow HH:MM` UTC). */
  skipped: Record<OutsideScheduler, string[]>;
  /** The reporting jobs whose second run in a repeated hour is an external run (no tick's, no penalty), by scheduler. */
  externals?: Record<OutsideScheduler, string[]>;
  /** The broken hourly job's ticks that are skipped, not missed (second passes, a tick of its own a gap moved). */
  brokenSkipped: string[];
}

const NIGHTS: Night[] = [
  // Spring forward. Cron runs the daily job right after the jump and not `0 */2`'s 02:00 (its hour starts with *); Kubernetes runs neither.
  { tz: 'Europe/Berlin', change: '2026-03-29T01:00:00Z', daily: '30 2 * * *', skipped: { vixie: ['two-hourly 01:00'], 'real-minutes': ['daily 01:30', 'two-hourly 01:00'] }, brokenSkipped: [] },
  { tz: 'America/New_York', change: '2026-03-08T07:00:00Z', daily: '30 2 * * *', skipped: { vixie: ['two-hourly 07:00'], 'real-minutes': ['daily 07:30', 'two-hourly 07:00'] }, brokenSkipped: [] },
  { tz: 'Australia/Sydney', change: '2026-10-03T16:00:00Z', daily: '30 2 * * *', skipped: { vixie: ['two-hourly 16:00'], 'real-minutes': ['daily 16:30', 'two-hourly 16:00'] }, brokenSkipped: [] },
  // Half an hour: 02:00 is skipped and 02:30 is no hourly time, so the hourly job's moved 02:00 is a tick of its own that nobody runs.
  {
    tz: 'Australia/Lord_Howe',
    change: '2026-10-03T15:30:00Z',
    daily: '15 2 * * *',
    skipped: { vixie: ['hourly 15:30', 'two-hourly 15:30'], 'real-minutes': ['daily 15:45', 'hourly 15:30', 'two-hourly 15:30'] },
    brokenSkipped: ['15:30'],
  },
  // Midnight does not exist: a `0 0` job is cron's fixed-time catch-up at 01:00.
  { tz: 'America/Santiago', change: '2026-09-06T04:00:00Z', daily: '0 0 * * *', skipped: { vixie: ['two-hourly 04:00'], 'real-minutes': ['daily 04:00', 'two-hourly 04:00'] }, brokenSkipped: [] },
  // Fall back: both schedulers run every-hour jobs at both passes, so nothing is skipped; only the broken job's second passes are.
  // A second run of a job fired once in the repeated hour is external: Kubernetes runs 02:30 twice; both run `0 */2`'s 02:00 twice.
  {
    tz: 'Europe/Berlin',
    change: '2026-10-25T01:00:00Z',
    daily: '30 2 * * *',
    skipped: { vixie: [], 'real-minutes': [] },
    externals: { vixie: ['two-hourly'], 'real-minutes': ['daily', 'two-hourly'] },
    brokenSkipped: ['01:00'],
  },
  { tz: 'America/New_York', change: '2026-11-01T06:00:00Z', daily: '30 1 * * *', skipped: { vixie: [], 'real-minutes': [] }, externals: { vixie: [], 'real-minutes': ['daily'] }, brokenSkipped: ['06:00'] },
  {
    tz: 'Australia/Sydney',
    change: '2026-04-04T16:00:00Z',
    daily: '30 2 * * *',
    skipped: { vixie: [], 'real-minutes': [] },
    externals: { vixie: ['two-hourly'], 'real-minutes': ['daily', 'two-hourly'] },
    brokenSkipped: ['16:00'],
  },
  // Half an hour back: 01:30–01:59 repeats, within the daily job's grace of its first pass.
  { tz: 'Australia/Lord_Howe', change: '2026-04-04T15:00:00Z', daily: '45 1 * * *', skipped: { vixie: [], 'real-minutes': [] }, externals: { vixie: [], 'real-minutes': ['daily'] }, brokenSkipped: [] },
  { tz: 'America/Santiago', change: '2026-04-05T03:00:00Z', daily: '30 23 * * *', skipped: { vixie: [], 'real-minutes': [] }, externals: { vixie: [], 'real-minutes': ['daily'] }, brokenSkipped: ['03:00'] },
  // No DST: every tick runs, every silence is missed.
  { tz: 'Asia/Tokyo', change: '2026-03-28T17:00:00Z', daily: '0 2 * * *', skipped: { vixie: [], 'real-minutes': [] }, brokenSkipped: [] },
];

async function tickRows(workflowId: number) {
  return t.db.selectFrom('runs').select(['tick', 'status', 'trigger', 'outcomeNote']).where('workflowId', '=', workflowId).where('originalRunId', 'is', null).orderBy('startedAt').orderBy('id').execute();
}

describe('observed jobs on DST nights, as cron and Kubernetes run them', { timeout: 120_000 }, () => {
  for (const night of NIGHTS) {
    for (const scheduler of ['vixie', 'real-minutes'] as const) {
      it(`${night.tz} ${night.change.slice(0, 10)}, ${scheduler}: nothing missed, no alert but the broken job's; skipped ticks say why`, async () => {
        const from = new Date(Date.parse(night.change) - 2 * HOUR);
        const until = new Date(Date.parse(night.change) + 3 * HOUR);
        // Up (heartbeating) before the first tick: a tick the monitor was down for is skipped for that reason instead.
        engine = createEngine(t.db, new Date(from.getTime() - 5 * 60_000));
        await engine.step();
        const crons: Record<string, string> = { daily: night.daily, hourly: '0 * * * *', quarter: '*/15 * * * *', 'two-hourly': '0 */2 * * *', broken: '0 * * * *' };
        const workflows = new Map<string, number>();
        for (const [name, cron] of Object.entries(crons)) {
          const wf = await makeWorkflow(t.db, { name, cron, timezone: night.tz, mode: 'observed', nextTickAt: nextFireAfter(cron, night.tz, new Date(from.getTime() - 1)) });
          workflows.set(name, wf.id);
        }
        const starts = Object.entries(crons)
          .filter(([name]) => name !== 'broken')
          .flatMap(([name, cron]) => outsideStarts(scheduler, cron, night.tz, from, until).map((at) => ({ name, at })))
          .sort((a, b) => a.at.getTime() - b.at.getTime());
        let stepped = from.getTime();
        for (const start of starts) {
          engine.clock.set(start.at);
          // The loops every half hour of the night (each pass judges every tick whose window has closed).
          if (start.at.getTime() - stepped >= HOUR / 2) {
            await engine.step();
            stepped = start.at.getTime();
          }
          const result = await reportRun(engine.deps, { tenant: 'acme', workflow: start.name, status: 'succeeded' }, {});
          expect(result.kind).toBe('created');
        }
        engine.clock.set(until);
        await engine.step();
        await engine.step();

        const skipped: string[] = [];
        const externals: string[] = [];
        for (const name of ['daily', 'hourly', 'quarter', 'two-hourly']) {
          const rows = await tickRows(workflows.get(name)!);
          expect(rows.filter((r) => r.status !== 'succeeded' && r.status !== 'skipped'), name).toEqual([]);
          for (const r of rows.filter((r) => r.status === 'skipped')) {
            expect(r.outcomeNote, `${name} ${r.tick?.toISOString()}`).toMatch(/^DST: /);
            skipped.push(`${name} ${r.tick!.toISOString().slice(11, 16)}`);
          }
          // Every run the scheduler started is a row: its tick's, or (a second run in a repeated hour) an external one.
          const runs = starts.filter((s) => s.name === name).length;
          expect(rows.filter((r) => r.status === 'succeeded'), name).toHaveLength(runs);
            externals.push(...rows.filter((r) => r.trigger === 'external').map(() => name));
        }
        expect(skipped.sort()).toEqual([...night.skipped[scheduler]].sort());
        expect(externals).toEqual(night.externals?.[scheduler] ?? []);

        const broken = await tickRows(workflows.get('broken')!);
        expect(broken.filter((r) => r.status === 'skipped').map((r) => r.tick!.toISOString().slice(11, 16))).toEqual(night.brokenSkipped);
        expect(broken.filter((r) => r.status === 'missed').length).toBeGreaterThanOrEqual(3);
        const alerts = await t.db.selectFrom('alerts').select(['workflowId', 'status']).execute();
        expect(alerts).toEqual([{ workflowId: workflows.get('broken')!, status: 'open' }]);
      });
    }
  }
});
