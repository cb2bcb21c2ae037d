import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { finishRun, insertRunningRun } from '../../src/ledger/runs.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

it('a finished run wakes the poller through LISTEN/NOTIFY: the alert exists long before any poll interval', async () => {
  await makeTenant(t.db);
  const wf = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *' });
  // The test clock never moves, so the loops' interval sleeps never end: only a NOTIFY can wake the poller.
  const clock = new ManualClock('2026-03-10T02:05:00Z');
  const app = await startTestApp(t, { PLATFORM_CHANNEL: 'CPLATFORM' }, { clock, loops: true });
  try {
    // Waits on conditions, never on a duration: the clock never moves, so however slow the machine, only a NOTIFY can make the alert.
    await eventually(() => expect(app.loops.find((l) => l.status.name === 'run-poller')!.status.ticks).toBeGreaterThan(0), 60_000);
    await eventually(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = 'scheduler-bot:listen' and datname = current_database() and query ilike 'listen%'`.execute(t.db);
      expect(rows[0]!.n).toBeGreaterThan(0);
    }, 60_000);
    const run = await t.db.transaction().execute((trx) =>
      insertRunningRun(trx, { workflow: wf, tick: new Date('2026-03-10T02:00:00Z'), trigger: 'external', timeoutSeconds: 600, leaseOwner: null }, clock.now()),
    );
    await finishRun({ db: t.db, clock }, run!.id, { status: 'failed', error: 'disk full' });
    const alert = await eventually(() => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow(), 60_000);
    expect(alert).toMatchObject({ severity: 'critical', lastError: 'disk full' });
  } finally {
    await app.stop();
  }
});
