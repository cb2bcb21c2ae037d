import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { finishRun, insertRunningRun } from '../../src/services/runs.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
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
    const deadline = Date.now() + 5000;
    while (app.loops.find((l) => l.status.name === 'run-poller')!.status.ticks === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // the LISTEN connection is up
    const run = await t.db.transaction().execute((trx) =>
      insertRunningRun(trx, { workflow: wf, tick: new Date('2026-03-10T02:00:00Z'), trigger: 'external', timeoutSeconds: 600, leaseOwner: null }, clock.now()),
    );
    await finishRun({ db: t.db, clock }, run!.id, { status: 'failed', error: 'disk full' });
    let alert;
    while (!alert && Date.now() < deadline) {
      alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirst();
      if (!alert) await new Promise((r) => setTimeout(r, 25));
    }
    expect(alert).toMatchObject({ severity: 'critical', lastError: 'disk full' });
  } finally {
    await app.stop();
  }
});
