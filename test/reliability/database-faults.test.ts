import { sql as raw } from 'kysely';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually } from './support.js';

/**
 * The database goes away under a running replica (every connection
 * terminated, and new ones refused for a while) and comes back. The replica
 * is not restarted: its loops must recover by themselves, /readyz must say
 * "not ready" while the database is gone, and what was reported around the
 * outage must be neither lost nor doubled. Real time and real loops, with
 * short intervals; waits are bounded polls for effects, not business deadlines.
 */

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let admin: Db;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await createTestDatabase();
  admin = createDb(createPool(inject('pgAdminUrl'), 1));
  slack = await RecordingSlackApi.start({ clock: systemClock });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
  app = await startTestApp(
    t,
    {
      API_TOKEN: ADMIN,
      SLACK_BOT_TOKEN: 'xoxb-db-faults',
      SLACK_SIGNING_SECRET: 'db-faults-signing-secret-000',
      SLACK_API_URL: slack.url,
      POLL_INTERVAL_SECONDS: '1',
      ESCALATION_INTERVAL_SECONDS: '1',
    },
    { clock: systemClock, loops: true },
  );
});
afterAll(async () => {
  await sql(`alter database ${t.name} allow_connections true`).catch(() => {});
  await app?.stop();
  await slack?.close();
  await admin?.destroy();
  await t?.drop();
});

const sql = (text: string) => raw.raw(text).execute(admin);

async function outage(): Promise<void> {
  await sql(`alter database ${t.name} allow_connections false`);
  await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${t.name}' and pid <> pg_backend_pid()`);
}

const report = (tick: string, status: 'failed' | 'succeeded') =>
  apiClient(app.url, ADMIN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status, tick, externalId: `nightly:${tick}`, ...(status === 'failed' ? { error: 'warehouse unreachable' } : {}) });

const readyz = async () => {
  const res = await fetch(`${app.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { ready: boolean; database: string } };
};

it('every connection terminated mid-run: /readyz reports the outage, loops recover without a restart, nothing lost or doubled', async () => {
  // Steady state: a failure opens an alert and its root reaches Slack.
  expect((await report('2026-03-10T02:00:00Z', 'failed')).status).toBe(201);
  await eventually(() => expect(slack.roots('CACME')).toHaveLength(1), 15_000);
  await eventually(async () => expect((await readyz()).status).toBe(200), 15_000);

  await outage();
  const down = await readyz();
  expect(down.status).toBe(503);
  expect(down.body.ready).toBe(false);
  expect(down.body.database).not.toBe('ok');
  // A report during the outage is refused (503, send again shortly), never half-recorded.
  const refused = await report('2026-03-11T02:00:00Z', 'succeeded');
  expect(refused.status).toBe(503);
  expect(refused.body).toEqual({ error: 'database_unavailable', message: 'the database is not answering; send the request again shortly' });

  await sql(`alter database ${t.name} allow_connections true`);
  // The reporter sends the same report again (same externalId), as a client would.
  const accepted = await eventually(async () => {
    const r = await report('2026-03-11T02:00:00Z', 'succeeded');
    expect([200, 201]).toContain(r.status);
    return r;
  }, 15_000);
  expect(accepted.status).toBe(201);
  expect((await report('2026-03-11T02:00:00Z', 'succeeded')).body.duplicate).toBe(true);

  // The same replica, never restarted, evaluates it and tells Slack the alert resolved: once.
  await eventually(async () => {
    const alert = await t.db.selectFrom('alerts').selectAll().executeTakeFirstOrThrow();
    expect(alert.status).toBe('resolved');
    const open = await t.db.selectFrom('notifications').select('status').where('status', '!=', 'sent').execute();
    expect(open).toEqual([]);
  }, 90_000);
  const [root] = slack.roots('CACME');
  await eventually(() => expect(slack.replies('CACME', root!.ts).map((m) => m.metadata?.event_payload.event)).toEqual(['resolved']), 15_000);
  const keys = slack.messages().map((m) => m.metadata?.event_payload.key);
  expect(new Set(keys).size).toBe(keys.length);
  expect(await t.db.selectFrom('runs').select(['tick', 'status']).orderBy('id').execute()).toEqual([
    { tick: new Date('2026-03-10T02:00:00Z'), status: 'failed' },
    { tick: new Date('2026-03-11T02:00:00Z'), status: 'succeeded' },
  ]);
  expect(await t.db.selectFrom('alerts').select('id').execute()).toHaveLength(1);
  // Every loop ticks again: ready without a restart.
  await eventually(async () => expect((await readyz()).status).toBe(200), 90_000);
}, 240_000);

it('a connection terminated while checked out between statements fails that transaction, not the process; the pool carries on', async () => {
  const result = t.db.transaction().execute(async (trx) => {
    const { rows } = await raw<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
    const pid = rows[0]!.pid;
    await sql(`select pg_terminate_backend(${pid})`);
    // The backend is gone while nothing is running on this connection; its FATAL is on the way to the pool.
    await eventually(async () => expect((await sql(`select 1 from pg_stat_activity where pid = ${pid}`)).rows).toEqual([]));
    await raw`select 1`.execute(trx);
  });
  await expect(result).rejects.toThrow();
  const { rows } = await raw<{ ok: number }>`select 1 as ok`.execute(t.db);
  expect(rows).toEqual([{ ok: 1 }]);
});
