import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * An observed job scheduled inside the hour a spring-forward skips. The bot
 * places that tick as late as the gap is long (02:30 in Berlin's gap is 03:30
 * CEST, src/domain/schedule.ts), but the outside scheduler may run it as soon
 * as the clocks change: Vixie cron and cronie (the crontab line the bot hands
 * out, with CRON_TZ) run a fixed-time job whose time was skipped "soon after
 * the change", at 03:00. That run is the tick's run, not an external one
 * followed by a missed tick and a critical page.
 */

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

const report = (workflow: string, status: 'running' | 'succeeded', externalId: string) => reportRun(engine.deps, { tenant: 'acme', workflow, status, externalId }, {});

const NIGHTS = [
  // Berlin, 29 March 2026: 02:00 CET → 03:00 CEST at 01:00 UTC; the 02:30 tick is 03:30 CEST (01:30 UTC).
  { tz: 'Europe/Berlin', cron: '30 2 * * *', from: '2026-03-28T23:00:00Z', change: '2026-03-29T01:00:00Z', tick: '2026-03-29T01:30:00Z' },
  // New York, 8 March 2026: 02:00 EST → 03:00 EDT at 07:00 UTC; the 02:30 tick is 03:30 EDT (07:30 UTC).
  { tz: 'America/New_York', cron: '30 2 * * *', from: '2026-03-08T05:00:00Z', change: '2026-03-08T07:00:00Z', tick: '2026-03-08T07:30:00Z' },
  // Lord Howe, 4 October 2026: 02:00 LHST → 02:30 LHDT at 15:30 UTC (a 30-minute change); a 02:15 job fires at 02:45 LHDT (15:45 UTC).
  { tz: 'Australia/Lord_Howe', cron: '15 2 * * *', from: '2026-10-03T13:00:00Z', change: '2026-10-03T15:30:00Z', tick: '2026-10-03T15:45:00Z' },
];

describe('an observed job in the skipped hour, run by cron as the clocks change', () => {
  for (const night of NIGHTS) {
    it(`${night.tz}: started at the change, it is the tick's run; nothing missed, no alert`, async () => {
      engine = createEngine(t.db, night.from);
      const wf = await makeWorkflow(t.db, { name: 'nightly', cron: night.cron, timezone: night.tz, mode: 'observed', nextTickAt: new Date(night.tick) });
      await engine.step();
      await stepUntil(engine, new Date(Date.parse(night.change) + 2_000));
      expect((await report('nightly', 'running', 'r1')).kind).toBe('created');
      await stepUntil(engine, new Date(Date.parse(night.change) + 10 * 60_000));
      await report('nightly', 'succeeded', 'r1');
      // Past the tick's grace (half an hour for a daily job).
      await stepUntil(engine, new Date(Date.parse(night.tick) + 45 * 60_000));
      const rows = await t.db.selectFrom('runs').select(['tick', 'status', 'trigger']).where('workflowId', '=', wf.id).execute();
      expect(rows).toEqual([{ tick: new Date(night.tick), status: 'succeeded', trigger: 'schedule' }]);
      expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
    });
  }
});
