import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually } from './support.js';

/**
 * The bulkhead of issue 19: after a database blip, every client resends its
 * reports at once. With one pool, the loops' queries queued behind all of
 * them until their connect timeout failed the ticks. The HTTP API has its own
 * pool: here it is exhausted outright, and the engine goes on regardless.
 */

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let apiPool: pg.Pool;
let apiDb: Db;
let held: pg.PoolClient;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await createTestDatabase();
  apiPool = createPool(t.url, 1);
  apiDb = createDb(apiPool);
  slack = await RecordingSlackApi.start({ clock: systemClock });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  app = await startTestApp(
    t,
    { API_TOKEN: ADMIN, SLACK_BOT_TOKEN: 'xoxb-api-pool', SLACK_SIGNING_SECRET: 'api-pool-signing-secret-000', SLACK_API_URL: slack.url, POLL_INTERVAL_SECONDS: '1' },
    { clock: systemClock, loops: true, apiDb },
  );
});
afterAll(async () => {
  held?.release();
  await app?.stop();
  await apiDb?.destroy();
  await slack?.close();
  await t?.drop();
});

it('with every connection of the API pool taken, API requests are refused with 503 while the loops still evaluate and tell a failure', async () => {
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *', policy: { alertAfter: 1 } });
  held = await apiPool.connect();

  const refused = await apiClient(app.url, ADMIN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'failed', tick: '2026-03-09T02:00:00Z', externalId: 'nightly:1' });
  expect(refused.status).toBe(503);

  // A run recorded by other means (another replica's API, a launcher) is the loops' business: evaluated and told.
  await reportRun(t.db, wf, new Date('2026-03-10T02:00:00Z'), { status: 'failed', error: 'disk full' }, systemClock.now());
  await eventually(async () => expect(await t.db.selectFrom('alerts').select('status').execute()).toEqual([{ status: 'open' }]), 15_000);
  await eventually(() => expect(slack.roots('CACME')).toHaveLength(1), 15_000);
});
