import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Router } from 'express';
import { ManualClock } from '../../src/clock.js';
import { ledgerRoutes } from '../../src/http/ledger-routes.js';
import { maintenanceRoutes } from '../../src/http/maintenance-routes.js';
import { runsRoutes } from '../../src/http/runs-routes.js';
import { tenantsRoutes } from '../../src/http/tenants-routes.js';
import { workflowsRoutes } from '../../src/http/workflows-routes.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * The API's input rules, each from one place (src/http/query-parameters.ts,
 * src/http/input-guards.ts, src/domain/maintenance.ts), tried through the
 * real server: a 400 naming the field and the value, nothing stored.
 */

const ADMIN = 'admin-token-input-rules-0123456789ab';
const ACME_TOKEN = 'sbt_acme-input-rules-token-0123456789';
const DAY = 86_400_000;

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(T0);
const admin = () => apiClient(app.url, ADMIN);
const acme = () => apiClient(app.url, ACME_TOKEN);
const ids = { acmeRun: 0, globexRun: 0, acmeAlert: 0, globexAlert: 0 };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *', mode: 'observed' });
  await makeWorkflow(t.db, { tenantId: 'globex', name: 'nightly', cron: '0 2 * * *', mode: 'observed' });
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  for (const tenant of ['acme', 'globex'] as const) {
    const res = await admin()('POST', '/api/v1/runs', { tenant, workflow: 'nightly', status: 'failed', error: 'boom' });
    expect(res.status).toBe(201);
    ids[`${tenant}Run`] = res.body.id;
    const alert = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.id').where('workflows.tenantId', '=', tenant).executeTakeFirstOrThrow();
    ids[`${tenant}Alert`] = alert.id;
  }
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

/** Rows an accepted request would add or change. */
async function footprint() {
  const count = async (table: 'runs' | 'maintenanceWindows' | 'alertEvents' | 'workflows' | 'tenants') => Number((await t.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const paused = await t.db.selectFrom('workflows').select(['paused', 'enabled']).orderBy('id').execute();
  return { runs: await count('runs'), windows: await count('maintenanceWindows'), events: await count('alertEvents'), workflows: await count('workflows'), tenants: await count('tenants'), paused };
}

describe('numbers in the query are whole numbers in decimal digits', () => {
  const paths = () => ['/api/v1/runs', '/api/v1/alerts', `/api/v1/alerts/${ids.acmeAlert}`];
  it.each(['0x10', '1e1', '0b11', '%205%20', '5.0', '-1', '', 'Infinity', '0'])('limit=%s: 400 naming query.limit and the value', async (raw) => {
    for (const path of paths()) {
      const res = await acme()('GET', `${path}?limit=${raw}`);
      expect(res.status, path).toBe(400);
      expect(res.body.message).toBe(`query: limit: ${raw === '0' ? 'must be 1 to 200' : 'must be a whole number written in decimal digits, 1 to 200'} (got ${JSON.stringify(decodeURIComponent(raw))})`);
    }
  });

  it('limit=5 and limit=200 are read as before', async () => {
    for (const path of paths()) {
      expect((await acme()('GET', `${path}?limit=5`)).status, path).toBe(200);
      expect((await acme()('GET', `${path}?limit=200`)).status, path).toBe(200);
    }
  });

  it('a parameter given twice: 400 naming it and both values, whichever the route', async () => {
    for (const query of ['limit=1&limit=2', 'status=failed&status=succeeded', 'cursor=5&cursor=6']) {
      const res = await acme()('GET', `/api/v1/runs?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^query: ${query.split('=')[0]}: give it once \\(got \\[`));
    }
  });
});

/** Every route of the API, as its routers list it, with its parameters filled in. */
function everyRoute(): { method: string; path: string }[] {
  const routers: Router[] = [runsRoutes(app.deps), ledgerRoutes(app.deps), workflowsRoutes(app.deps), tenantsRoutes(app.deps), maintenanceRoutes(app.deps)];
  const fill = (p: string) => p.replace(':tenant', 'acme').replace(':name', 'nightly').replace(':id', p.startsWith('/alerts') ? String(ids.acmeAlert) : p.startsWith('/runs') ? String(ids.acmeRun) : 'acme');
  return routers.flatMap((r) => (r as Router & { listRoutes(): { path: string; methods: string[] }[] }).listRoutes().flatMap((route) => route.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: fill(route.path) }))));
}

describe('query parameters a route does not take', () => {
  it('every route of the API refuses them with a 400 naming them, before anything is read or stored', async () => {
    const routes = everyRoute();
    expect(routes.length).toBeGreaterThan(15);
    const before = await footprint();
    for (const { method, path } of routes) {
      const res = await admin()(method, `/api/v1${path}?bogus=1&tenant=globex`, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.message, `${method} ${path}`).toMatch(/^query: unknown parameter "bogus"/);
      if (path === '/runs' && method === 'GET') expect(res.body.message).toBe('query: unknown parameter "bogus": GET /runs takes only tenant, workflow, status, trigger, from, to, cursor, limit');
      else if (!path.startsWith('/alerts')) expect(res.body.message, `${method} ${path}`).toContain('"tenant"');
    }
    expect(await footprint()).toEqual(before);
  });

  it('a parameter written as a list (limit[]=1) is unknown, named as sent', async () => {
    const res = await acme()('GET', '/api/v1/runs?limit[]=1');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^query: unknown parameter "limit\[\]"/);
  });

  it('a path no endpoint answers is still a 404, whatever its query', async () => {
    expect((await acme()('GET', '/api/v1/nothing?bogus=1')).status).toBe(404);
  });
});

describe('JSON bodies with a key given twice', () => {
  it.each([
    ['POST', '/api/v1/maintenance', '{"tenant":"acme","tenant":"globex","duration":"1h","reason":"x"}', 'body.tenant'],
    ['POST', '/api/v1/runs', '{"tenant":"acme","workflow":"nightly","status":"succeeded","status":"failed"}', 'body.status'],
    ['PUT', '/api/v1/workflows/acme/other', '{"cron":"0 2 * * *","mode":"observed","policy":{"retries":1,"retries":3}}', 'body.policy.retries'],
  ])('%s %s: 400 naming the key, nothing stored', async (method, path, body, at) => {
    const before = await footprint();
    const res = await acme()(method, path, body, { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`${at}: "${at.split('.').pop()}" is given twice in one object; JSON keeps only the last, so send it once`);
    expect(await footprint()).toEqual(before);
  });
});

describe('a "__proto__" key anywhere in a body', () => {
  // A record field (launcher headers, command env) copied by the schema assigned the key, setting the copy's
  // prototype: the header was dropped without a word (201), and an object value became what every missing name reads.
  it.each([
    ['launcher.headers', '{"cron":"0 2 * * *","mode":"managed","launcher":{"kind":"http","url":"https://example.com/x","headers":{"__proto__":{"authorization":"Bearer x"},"x-a":"b"}}}'],
    ['launcher.env', '{"cron":"0 2 * * *","mode":"managed","launcher":{"kind":"command","command":"true","env":{"__proto__":"x","PATH":"/bin"}}}'],
  ])('in %s: 400 naming where, nothing stored', async (at, body) => {
    const before = await footprint();
    const res = await admin()('PUT', '/api/v1/workflows/acme/proto-record', body, { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`body.${at}: "__proto__" is not allowed as a key`);
    expect(await footprint()).toEqual(before);
  });
});

describe('a one-off maintenance window starts within bounds', () => {
  const window = (startsAt: string, tenant = 'acme', duration = '1h') => ({ tenant, duration, reason: 'db upgrade', startsAt });
  it.each(['0000-01-01T00:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T00:00:00Z', new Date(T0.getTime() + 91 * DAY).toISOString(), new Date(T0.getTime() - 2 * 3_600_000).toISOString()])(
    'startsAt %s: 400 naming body.startsAt and the value, nothing stored',
    async (startsAt) => {
      const before = await footprint();
      const res = await acme()('POST', '/api/v1/maintenance', window(startsAt));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^body\\.startsAt: (must be at most 90 days ahead|the window would have ended already).* \\(got "${startsAt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\)$`));
      expect(await footprint()).toEqual(before);
    },
  );

  it('within 90 days ahead, or begun in the past and still in force: 201', async () => {
    const ahead = await acme()('POST', '/api/v1/maintenance', window(new Date(T0.getTime() + 89 * DAY).toISOString()));
    expect(ahead.status).toBe(201);
    const begun = await acme()('POST', '/api/v1/maintenance', window(new Date(T0.getTime() - 30 * 60_000).toISOString()));
    expect(begun.status).toBe(201);
  });

  it("another tenant's name with a bad start is the same 404 as a tenant that does not exist", async () => {
    const theirs = await acme()('POST', '/api/v1/maintenance', window('9999-12-31T00:00:00Z', 'globex'));
    const nobody = await acme()('POST', '/api/v1/maintenance', window('9999-12-31T00:00:00Z', 'nobody'));
    expect(theirs.status).toBe(404);
    expect(nobody.status).toBe(404);
    expect(theirs.body).toEqual({ ...nobody.body, message: nobody.body.message.replace('nobody', 'globex') });
  });
});

describe('numbers beyond the safe integers', () => {
  it('one line naming the field, its own bound and the value (not also the safe-integer bound of .int())', async () => {
    const res = await acme()('POST', '/api/v1/maintenance', '{"tenant":"acme","durationMinutes":9007199254740993,"reason":"x"}', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual(['body: durationMinutes: Too big: expected number to be <=10080 (got 9007199254740992)']);
    const low = await acme()('POST', '/api/v1/runs/' + ids.acmeRun, { status: 'failed', exitCode: -(2 ** 60) });
    expect(low.body.issues).toEqual([`body: exitCode: Too small: expected number to be >=-2147483648 (got ${-(2 ** 60)})`]);
    // 1e400 is read as Infinity; the answer said "(got null)".
    const huge = await acme()('POST', '/api/v1/runs/' + ids.acmeRun, '{"status":"failed","rows":1e400}', { 'content-type': 'application/json' });
    expect(huge.status).toBe(400);
    expect(huge.body.message).toMatch(/^body: rows: .* \(got Infinity\)$/);
  });
});

describe('ids in a path', () => {
  it.each(['0', '007', '1e3', '-1', '9999999999999999'])('%s: 400 naming the path and the value on every id route', async (raw) => {
    for (const [method, path, what] of [['GET', '/api/v1/runs/', 'run'], ['POST', '/api/v1/runs/', 'run'], ['GET', '/api/v1/alerts/', 'alert']] as const) {
      const res = await acme()(method, `${path}${raw}`, method === 'POST' ? { status: 'succeeded' } : undefined);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.message).toBe(`path: ${what} id must be a positive integer without leading zeros (got ${JSON.stringify(raw)})`);
    }
  });

  it("another tenant's id answers exactly as an absent one: same status, same body but for the id", async () => {
    const absent = 99_999;
    const pairs: [string, string, (id: number) => string, unknown?][] = [
      ['GET', 'run', (id) => `/api/v1/runs/${id}`],
      ['POST', 'run', (id) => `/api/v1/runs/${id}`, { status: 'succeeded' }],
      ['GET', 'alert', (id) => `/api/v1/alerts/${id}`],
    ];
    for (const [method, what, path, body] of pairs) {
      const theirs = await acme()(method, path(what === 'run' ? ids.globexRun : ids.globexAlert), body);
      const none = await acme()(method, path(absent), body);
      expect(theirs.status).toBe(404);
      expect(none.status).toBe(404);
      expect(theirs.body).toEqual(JSON.parse(JSON.stringify(none.body).replace(String(absent), String(what === 'run' ? ids.globexRun : ids.globexAlert))));
    }
  });
});
