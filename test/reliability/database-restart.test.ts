import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { createScratchDatabase, withDatabase, type ScratchDatabase } from '../../src/db/scratch.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually } from './support.js';

/**
 * Issue 19: every bot connection terminated in the middle of a batch, then
 * PostgreSQL itself stopped and started again under a running replica. The
 * server is an embedded one this test starts, so it can really be
 * restarted. Runs reported right after the database answers again must be
 * evaluated and told in Slack within seconds (not after a back-off of a
 * minute), and /readyz must say 503 on every look while it is down.
 */

const ADMIN = 'admin-token-0123456789abcdef';
const WORKFLOWS = 10;
/** "Within seconds", with room for a loaded 2-core machine. */
const RECOVERY_LIMIT_MS = 20_000;

let dir: string;
let server: EmbeddedServer;
let scratch: ScratchDatabase;
let view: Db;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scheduler-bot-restart-'));
  await chmod(dir, 0o711); // as root, the server's own user passes through to its data
  server = await startEmbeddedPostgres(join(dir, 'postgres'), { persistent: true });
  scratch = await createScratchDatabase(server.url('postgres'), 'restart_test', { poolSize: 10 });
  // The test's own view of the ledger, named so that terminating the bot's connections spares it.
  view = createDb(createPool(scratch.url, 2, 'test-view'));
  slack = await RecordingSlackApi.start({ clock: systemClock });
  await makeTenant(scratch.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  for (let i = 0; i < WORKFLOWS; i++) await makeWorkflow(scratch.db, { tenantId: 'acme', name: `w${i}`, cron: '0 2 * * *' });
  // Each alert its own root (storms off): this test counts roots told after the restart.
  app = await startTestApp(
    scratch,
    { API_TOKEN: ADMIN, SLACK_BOT_TOKEN: 'xoxb-restart', SLACK_SIGNING_SECRET: 'restart-signing-secret-000', SLACK_API_URL: slack.url, POLL_INTERVAL_SECONDS: '1', ESCALATION_INTERVAL_SECONDS: '1', STORM_MIN_ALERTS: '0' },
    { clock: systemClock, loops: true },
  );
}, 240_000);

afterAll(async () => {
  await app?.stop();
  await slack?.close();
  await view?.destroy();
  await scratch?.db.destroy();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const api = () => apiClient(app.url, ADMIN);
const report = (i: number, tick: string, status: 'failed' | 'succeeded') =>
  api()('POST', '/api/v1/runs', { tenant: 'acme', workflow: `w${i}`, status, tick, externalId: `w${i}:${tick}`, ...(status === 'failed' ? { error: 'warehouse unreachable' } : {}) });
const readyz = async () => (await fetch(`${app.url}/readyz`, { signal: AbortSignal.timeout(10_000) })).status;
const all = (n: number) => Array.from({ length: n }, (_, i) => i);

it('terminated mid-batch, then restarted: /readyz 503 throughout the outage, and runs reported right after it are evaluated and told within seconds', async () => {
  // A batch of failures, and every bot connection terminated while the poller and the sender work on it.
  const first = all(WORKFLOWS).map((i) => report(i, '2026-03-10T02:00:00Z', 'failed'));
  await eventually(async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from runs`.execute(view);
    expect(rows[0]!.n).toBeGreaterThan(0);
  }, 30_000);
  await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'scheduler-bot%'`.execute(view);
  // Reports that met a dead connection are sent again, as a client would (same externalId).
  for (const [i, answer] of (await Promise.all(first)).entries()) {
    if (answer.status >= 500) await eventually(async () => expect([200, 201]).toContain((await report(i, '2026-03-10T02:00:00Z', 'failed')).status), 30_000);
  }
  await eventually(() => expect(slack.roots('CACME')).toHaveLength(WORKFLOWS), 60_000);
  await eventually(async () => expect(await readyz()).toBe(200), 60_000);

  // PostgreSQL goes away altogether: every look at /readyz says so.
  await server.stop();
  const looks: number[] = [];
  for (let k = 0; k < 4; k++) {
    looks.push(await readyz());
    await new Promise((r) => setTimeout(r, 300));
  }
  expect(looks).toEqual([503, 503, 503, 503]);
  expect((await report(0, '2026-03-11T02:00:00Z', 'succeeded')).status).toBeGreaterThanOrEqual(500);

  server = await startEmbeddedPostgres(join(dir, 'postgres'), { persistent: true });
  expect(withDatabase(server.url('postgres'), 'restart_test')).toBe(scratch.url);
  await eventually(async () => expect((await sql<{ ok: number }>`select 1 as ok`.execute(view)).rows).toEqual([{ ok: 1 }]), 30_000);
  const back = Date.now();

  // Reported the moment the API takes them again; the loops must not be asleep on a long back-off.
  await Promise.all(all(WORKFLOWS).map((i) => eventually(async () => expect([200, 201]).toContain((await report(i, '2026-03-11T02:00:00Z', 'succeeded')).status), RECOVERY_LIMIT_MS)));
  const accepted = Date.now();
  expect(accepted - back).toBeLessThan(RECOVERY_LIMIT_MS);
  await eventually(async () => {
    const open = await view.selectFrom('runs').select('id').where('processedAt', 'is', null).execute();
    expect(open).toEqual([]);
    const resolved = slack.roots('CACME').filter((root) => slack.replies('CACME', root.ts).some((m) => m.metadata?.event_payload.event === 'resolved'));
    expect(resolved).toHaveLength(WORKFLOWS);
  }, RECOVERY_LIMIT_MS);
  expect(Date.now() - accepted).toBeLessThan(RECOVERY_LIMIT_MS);

  // Nothing doubled on the way: one alert and one root per workflow, every key sent once.
  expect(await view.selectFrom('alerts').select('id').execute()).toHaveLength(WORKFLOWS);
  const keys = slack.messages().map((m) => m.metadata?.event_payload.key);
  expect(new Set(keys).size).toBe(keys.length);
  // And every loop has ticked since the database came back: ready again without a restart.
  await eventually(async () => expect(await readyz()).toBe(200), 30_000);
}, 300_000);

it('keeps the superuser password random per folder, in a file only its owner can read', async () => {
  const password = decodeURIComponent(new URL(server.url()).password);
  expect(password).toMatch(/^[0-9a-f]{64}$/);
  expect((await stat(join(dir, 'postgres', 'password'))).mode & 0o777).toBe(0o600);
});
