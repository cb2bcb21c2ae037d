import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * Two tenants with the same workflow name (`load`): acme's token, naming
 * globex's ids and names on every API surface, reaches nothing of globex's
 * and learns nothing (the answer is the one an id that does not exist gets),
 * and what it does reach is its own `load`, never globex's.
 */
const ADMIN = 'admin-token-isolation-0123456789ab';
const ACME_TOKEN = 'sbt_acme-isolation-token-0123456789a';
const GLOBEX_TOKEN = 'sbt_globex-isolation-token-012345678';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const acme = () => apiClient(app.url, ACME_TOKEN);
let theirs: { workflow: number; run: number; alert: number };
let ours: { workflow: number; run: number; alert: number };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN) });
  const made = async (tenantId: string) => {
    const w = await makeWorkflow(t.db, { tenantId, name: 'load', cron: '*/5 * * * *' });
    const run = await makeRun(t.db, { workflowId: w.id, status: 'failed', error: `${tenantId} secret error` });
    const alert = await insertAlert(t.db, w.id, { lastError: `${tenantId} secret error` });
    await t.db.insertInto('alertEvents').values({ alertId: alert.id, kind: 'opened', at: T0, data: JSON.stringify({}), actor: null }).execute();
    return { workflow: w.id, run: run.id, alert: alert.id };
  };
  ours = await made('acme');
  theirs = await made('globex');
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: new ManualClock(new Date(T0.getTime() + 600_000)) });
});
afterAll(async () => {
  await app?.stop();
  await t.drop();
});

describe("a tenant token naming another tenant's ids and names", () => {
  it('reads nothing of theirs: runs, alerts (with events), workflows, policy versions, tenants', async () => {
    const api = acme();
    const absent = 999_999;
    for (const [theirsPath, nonePath] of [
      [`/api/v1/runs/${theirs.run}`, `/api/v1/runs/${absent}`],
      [`/api/v1/alerts/${theirs.alert}`, `/api/v1/alerts/${absent}`],
      ['/api/v1/workflows/globex/load', '/api/v1/workflows/globex/no-such'],
      ['/api/v1/workflows/globex/load/policy-versions', '/api/v1/workflows/globex/no-such/policy-versions'],
    ]) {
      const got = await api('GET', theirsPath!);
      const none = await api('GET', nonePath!);
      expect({ path: theirsPath, status: got.status }).toEqual({ path: theirsPath, status: 404 });
      expect(got.text.replace(/globex\/load|\d+/g, 'X')).toBe(none.text.replace(/globex\/no-such|\d+/g, 'X'));
      expect(got.text).not.toContain('globex secret');
    }
    const lists = [
      await api('GET', '/api/v1/runs'),
      await api('GET', '/api/v1/runs?tenant=globex'),
      await api('GET', '/api/v1/runs?workflow=load'),
      await api('GET', '/api/v1/alerts'),
      await api('GET', '/api/v1/workflows'),
      await api('GET', '/api/v1/tenants'),
    ];
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.text).not.toContain('globex');
      expect(list.text).not.toContain('Globex');
    }
    // The same name in its own tenant is its own: `workflow=load` lists acme's run only.
    expect(lists[2]!.body.runs.map((r: { id: number }) => r.id)).toEqual([ours.run]);
    expect(lists[3]!.body.alerts.map((a: { id: number }) => a.id)).toEqual([ours.alert]);
  });

  it("changes nothing of theirs: finish, report, run now, pause, resume, maintenance, replace, delete, tenant writes", async () => {
    const api = acme();
    const before = await t.db.selectFrom('workflows').selectAll().where('id', '=', theirs.workflow).executeTakeFirstOrThrow();
    const answers = [
      await api('POST', `/api/v1/runs/${theirs.run}`, { status: 'succeeded' }),
      await api('POST', '/api/v1/runs', { tenant: 'globex', workflow: 'load', status: 'failed' }),
      await api('POST', '/api/v1/workflows/globex/load/run'),
      await api('POST', '/api/v1/workflows/globex/load/pause', { reason: 'x' }),
      await api('POST', '/api/v1/workflows/globex/load/resume'),
      await api('POST', '/api/v1/maintenance', { tenant: 'globex', duration: '1h', reason: 'x' }),
      await api('POST', '/api/v1/maintenance', { tenant: 'globex', workflow: 'load', duration: '1h', reason: 'x' }),
      await api('PUT', '/api/v1/workflows/globex/load', { cron: '0 * * * *' }),
      await api('DELETE', '/api/v1/workflows/globex/load'),
    ];
    for (const a of answers) expect([a.status, a.text]).toEqual([404, expect.not.stringContaining('Globex')]);
    for (const a of [await api('PUT', '/api/v1/tenants/globex', { name: 'Mine', channel: 'CMINE' }), await api('DELETE', '/api/v1/tenants/globex'), await api('POST', '/api/v1/tenants/globex/token')]) {
      expect(a.status).toBe(403);
    }
    expect(await t.db.selectFrom('workflows').selectAll().where('id', '=', theirs.workflow).executeTakeFirstOrThrow()).toEqual(before);
    expect(await t.db.selectFrom('runs').select(['id', 'status']).where('workflowId', '=', theirs.workflow).execute()).toEqual([{ id: theirs.run, status: 'failed' }]);
    expect(await t.db.selectFrom('maintenanceWindows').selectAll().execute()).toEqual([]);
    expect(await t.db.selectFrom('tenants').select(['name', 'channel']).where('id', '=', 'globex').executeTakeFirstOrThrow()).toEqual({ name: 'Globex', channel: 'CGLOBEX' });
  });
});
