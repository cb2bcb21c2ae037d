import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool } from '../../src/db/connect.js';
import { finishRun, insertRunningRun } from '../../src/ledger/runs.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { HttpReceiver } from '../destinations/http-receiver.js';

const ADMIN = 'admin-token-0123456789abcdef';

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

it('a failure reported over the API, on the API’s own pool, wakes this replica’s poller and sender in process: the webhook gets it with no LISTEN connection and a clock that never moves', async () => {
  await makeTenant(t.db, { channel: null });
  await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', policy: { alertAfter: 1, retries: 0 } });
  const receiver = await HttpReceiver.start();
  const apiDb = createDb(createPool(t.url, 2));
  // No databaseUrl: no LISTEN connection, so no NOTIFY reaches a loop; the clock never moves, so no interval ends either.
  const clock = new ManualClock('2026-03-10T02:05:00Z');
  const app = await startTestApp(
    t,
    { API_TOKEN: ADMIN, PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'webhook', url: `${receiver.url}/hook`, secret: 'whsec_0123456789abcdef' }]) },
    { clock, loops: true, apiDb, databaseUrl: undefined },
  );
  try {
    // Each loop's first tick runs at start; the report must come after, when only a wake-up can move them.
    await eventually(() => expect(app.loops.every((l) => l.status.ticks > 0)).toBe(true), 60_000);
    const answer = await apiClient(app.url, ADMIN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'failed', tick: '2026-03-10T02:00:00Z', error: 'disk full' });
    expect(answer.status).toBe(201);
    await eventually(() => expect(receiver.accepted()).toHaveLength(1), 20_000);
    expect(JSON.parse(receiver.accepted()[0]!.body)).toMatchObject({ event: 'opened', workflow: { name: 'nightly' }, alert: { lastError: 'disk full' } });
    await eventually(async () => expect(await t.db.selectFrom('notifications').select('status').execute()).toEqual([{ status: 'sent' }]), 60_000);
  } finally {
    await app.stop();
    await apiDb.destroy();
    await receiver.close();
  }
});
