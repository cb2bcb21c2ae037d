import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let admin: ReturnType<typeof apiClient>;
let acme: ReturnType<typeof apiClient>;
const ids: Record<string, number> = {};

const minute = (n: number) => new Date(T0.getTime() + n * 60_000);

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: new ManualClock(minute(100)) });
  admin = apiClient(app.url, ADMIN);
  acme = apiClient(app.url, (await admin('POST', '/api/v1/tenants/acme/token')).body.token);
  const etl = await makeWorkflow(t.db, { tenantId: 'acme', name: 'etl' });
  const report = await makeWorkflow(t.db, { tenantId: 'acme', name: 'report' });
  const secret = await makeWorkflow(t.db, { tenantId: 'globex', name: 'etl' });
  // Ten etl ticks, every third failed (with a retry attempt on the first failure), two report runs, one globex run.
  for (let i = 0; i < 10; i++) {
    const failed = i % 3 === 0;
    const run = await makeRun(t.db, { workflowId: etl.id, tick: minute(i * 5), status: failed ? 'failed' : 'succeeded', ...(failed ? { error: 'exit 1', stage: 'load', rows: 42, logExcerpt: 'line 1\nline 2' } : {}) });
    await sql`update runs set created_at = ${minute(i * 5)} where id = ${run.id}`.execute(t.db);
    ids[`etl${i}`] = run.id;
  }
  const retry = await makeRun(t.db, { workflowId: etl.id, tick: minute(0), trigger: 'retry', attempt: 2, originalRunId: ids.etl0!, status: 'failed', attemptStatus: 'failed', attemptError: 'exit 1 again' });
  ids.retry = retry.id;
  for (let i = 0; i < 2; i++) ids[`report${i}`] = (await makeRun(t.db, { workflowId: report.id, tick: minute(60 + i), trigger: 'manual' })).id;
  ids.globex = (await makeRun(t.db, { workflowId: secret.id, tick: minute(1), status: 'failed', error: 'globex secret failure' })).id;
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

describe('read API: runs', () => {
  it('lists a tenant\'s runs newest first, filtered, and pages through them with a cursor', async () => {
    const all = await acme('GET', '/api/v1/runs?workflow=etl&limit=4');
    expect(all.status).toBe(200);
    expect(all.body.runs.map((r: { id: number }) => r.id)).toEqual([ids.retry, ids.etl9, ids.etl8, ids.etl7]);
    const seen = [...all.body.runs];
    for (let cursor = all.body.next; cursor; ) {
      const page = await acme('GET', `/api/v1/runs?workflow=etl&limit=4&cursor=${cursor}`);
      seen.push(...page.body.runs);
      cursor = page.body.next;
    }
    expect(seen).toHaveLength(11);
    expect(new Set(seen.map((r) => r.id)).size).toBe(11);
    expect(seen.every((r) => r.tenant === 'acme' && r.workflow === 'etl')).toBe(true);

    const failed = await acme('GET', '/api/v1/runs?status=failed&trigger=schedule');
    expect(failed.body.runs.map((r: { id: number }) => r.id)).toEqual([ids.etl9, ids.etl6, ids.etl3, ids.etl0]);
    const window = await acme('GET', `/api/v1/runs?workflow=etl&trigger=schedule&from=${minute(10).toISOString()}&to=${minute(25).toISOString()}`);
    expect(window.body.runs.map((r: { id: number }) => r.id)).toEqual([ids.etl4, ids.etl3, ids.etl2]);
    const manual = await acme('GET', '/api/v1/runs?trigger=manual');
    expect(manual.body).toMatchObject({ next: null, runs: [{ id: ids.report1, workflow: 'report' }, { id: ids.report0 }] });
  });

  it('the workflow view links to its runs in the read API', async () => {
    const view = await acme('GET', '/api/v1/workflows/acme/etl');
    expect(view.body.links.runs).toBe('/api/v1/runs?tenant=acme&workflow=etl');
    const followed = await acme('GET', `${view.body.links.failedRuns}&limit=1`);
    expect(followed.body.runs).toMatchObject([{ id: ids.retry, status: 'failed', workflow: 'etl' }]);
  });

  it('shows one run with its error, stage, rows, log excerpt and every attempt of its tick', async () => {
    const one = await acme('GET', `/api/v1/runs/${ids.etl0}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: ids.etl0, tenant: 'acme', workflow: 'etl', status: 'failed', error: 'exit 1', stage: 'load', rows: 42, logExcerpt: 'line 1\nline 2' });
    expect(one.body.attempts.map((a: { id: number; attempt: number }) => [a.id, a.attempt])).toEqual([[ids.etl0, 1], [ids.retry, 2]]);
    expect((await acme('GET', `/api/v1/runs/${ids.retry}`)).body.attempts).toHaveLength(2);
  });

  it('keeps tenants apart: another tenant\'s run is not found and never listed; the admin sees every tenant', async () => {
    expect((await acme('GET', `/api/v1/runs/${ids.globex}`)).status).toBe(404);
    const listed = await acme('GET', '/api/v1/runs?limit=200');
    expect(listed.body.runs.map((r: { tenant: string }) => r.tenant)).not.toContain('globex');
    expect(listed.text).not.toContain('globex secret failure');
    expect((await acme('GET', '/api/v1/runs?tenant=globex')).body).toEqual({ runs: [], next: null });
    const globex = await admin('GET', '/api/v1/runs?tenant=globex');
    expect(globex.body.runs.map((r: { id: number }) => r.id)).toEqual([ids.globex]);
    expect((await apiClient(app.url)('GET', '/api/v1/runs')).status).toBe(401);
  });

  it('answers bad query parameters with 400 and a reason naming the parameter', async () => {
    for (const [query, field] of [
      ['status=exploded', 'status'],
      ['limit=0', 'limit'],
      ['limit=9999', 'limit'],
      ['from=yesterday', 'from'],
      ['cursor=abc', 'cursor'],
      // A cursor is the id of a page's last row (src/ledger/cursor-page.ts): never 0, never written with leading zeros.
      ['cursor=0', 'cursor'],
      ['cursor=00', 'cursor'],
      ['cursor=007', 'cursor'],
      ['colour=red', 'colour'],
    ]) {
      const r = await acme('GET', `/api/v1/runs?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.text, query).toContain(field!);
    }
    const backwards = await acme('GET', `/api/v1/runs?from=${minute(20).toISOString()}&to=${minute(10).toISOString()}`);
    expect(backwards.status).toBe(400);
    expect((await acme('GET', '/api/v1/runs/12abc')).status).toBe(400);
    for (const query of ['cursor=0', 'status=open&cursor=0']) {
      const r = await acme('GET', `/api/v1/alerts?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body, query).toMatchObject({ error: 'invalid_request' });
      expect(r.text, query).toContain('cursor');
    }
  });
});

describe('methods of a path', () => {
  it('OPTIONS answers every method the path takes, across the route modules, as JSON', async () => {
    for (const [path, allow] of [
      // POST /runs is the ingest module's, GET /runs the read module's: both, whichever is mounted first.
      ['/api/v1/runs', ['GET', 'HEAD', 'POST']],
      ['/api/v1/runs/812', ['GET', 'HEAD', 'POST']],
      ['/api/v1/alerts', ['GET', 'HEAD']],
      ['/api/v1/workflows/acme/etl', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['/api/v1/workflows/acme/etl/pause', ['POST']],
      ['/api/v1/tenants/acme', ['DELETE', 'PUT']],
    ] as const) {
      const r = await acme('OPTIONS', path);
      expect(r.status, path).toBe(200);
      expect(r.body, path).toEqual({ path: path.replace('/api/v1', ''), methods: allow });
      expect((await fetchAllow(path)).allow, path).toBe(allow.join(', '));
    }
  });

  it('a known path with a method it does not take is a JSON 405 with Allow, before its body is read', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/api/v1/runs', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/alerts/3', 'GET, HEAD'],
      ['GET', '/api/v1/maintenance', 'POST'],
      ['PATCH', '/api/v1/workflows/acme/etl', 'DELETE, GET, HEAD, PUT'],
    ] as const) {
      const r = await acme(method, path, method === 'GET' ? undefined : '{not json');
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(r.body, `${method} ${path}`).toMatchObject({ error: 'method_not_allowed', allow: allow.split(', ') });
      expect(r.body.message, `${method} ${path}`).toContain(method);
      expect((await fetchAllow(path, method)).allow).toBe(allow);
    }
    // The paths and methods that exist are unchanged; an unknown path stays a 404, and no token is still a 401.
    expect((await acme('GET', '/api/v1/runs?limit=1')).status).toBe(200);
    expect((await acme('OPTIONS', '/api/v1/nope')).status).toBe(404);
    expect((await acme('DELETE', '/api/v1/nope')).status).toBe(404);
    expect((await apiClient(app.url)('OPTIONS', '/api/v1/runs')).status).toBe(401);
  });
});

async function fetchAllow(path: string, method = 'OPTIONS'): Promise<{ status: number; allow: string | null; type: string | null }> {
  const r = await fetch(`${app.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  await r.arrayBuffer();
  return { status: r.status, allow: r.headers.get('allow'), type: r.headers.get('content-type') };
}

describe('unknown routes', () => {
  it('answer a JSON 404, inside /api/v1 and outside it, never an HTML page echoing the path', async () => {
    for (const [path, client] of [
      ['/api/v1/nope', acme],
      ['/api/v2/runs', acme],
      ['/nope/<script>', apiClient(app.url)],
      ['/', apiClient(app.url)],
    ] as const) {
      for (const method of ['GET', 'POST']) {
        const r = await client(method, path);
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.body, `${method} ${path}`).toMatchObject({ error: 'not_found' });
        expect(r.text).not.toContain('<');
      }
    }
  });
});

describe('read API: alerts', () => {
  it('lists open and resolved alerts in the tenant, and shows one with its timeline, owner history and delivery states, never a webhook URL', async () => {
    const wf = await t.db.selectFrom('workflows').selectAll().where('tenantId', '=', 'acme').where('name', '=', 'etl').executeTakeFirstOrThrow();
    const other = await t.db.selectFrom('workflows').selectAll().where('tenantId', '=', 'globex').executeTakeFirstOrThrow();
    const old = await insertAlert(t.db, wf.id, { status: 'resolved', openedAt: minute(0), resolvedAt: minute(30) });
    const open = await insertAlert(t.db, wf.id, { openedAt: minute(45), firstRunId: ids.etl9 });
    const hidden = await insertAlert(t.db, other.id, { openedAt: minute(45) });
    await addEvent(t.db, open.id, 'opened', { now: minute(45) });
    await addEvent(t.db, open.id, 'owner_changed', {
      now: minute(50),
      actor: 'U0ALICE',
      changes: { ownerUser: 'U0ALICE' },
      data: { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE' },
    });
    await sql`insert into notifications (alert_id, event_id, destination, idempotency_key, status, attempts, next_attempt_at, created_at, last_error)
      select ${open.id}, min(id), 'webhook:https://hooks.example.com/T0/secret-token', 'k-webhook', 'pending', 3, ${minute(60)}, ${minute(45)}, 'HTTP 503'
      from alert_events where alert_id = ${open.id}`.execute(t.db);

    const openList = await acme('GET', '/api/v1/alerts?status=open');
    expect(openList.body.alerts.map((a: { id: number }) => a.id)).toEqual([open.id]);
    const inRange = await acme('GET', `/api/v1/alerts?from=${minute(0).toISOString()}&to=${minute(40).toISOString()}`);
    expect(inRange.body.alerts).toMatchObject([{ id: old.id, status: 'resolved', workflow: 'etl' }]);
    expect((await acme('GET', '/api/v1/alerts?limit=200')).body.alerts.map((a: { id: number }) => a.id)).not.toContain(hidden.id);
    expect((await acme('GET', `/api/v1/alerts/${hidden.id}`)).status).toBe(404);
    expect((await acme('GET', '/api/v1/alerts?status=maybe')).status).toBe(400);

    const one = await acme('GET', `/api/v1/alerts/${open.id}`);
    expect(one.status).toBe(200);
    expect(one.body.events.map((e: { kind: string }) => e.kind)).toEqual(['opened', 'owner_changed']);
    expect(one.body.ownerHistory).toMatchObject([{ actor: 'U0ALICE', toUser: 'U0ALICE' }]);
    expect(one.body.notifications).toContainEqual(expect.objectContaining({ destination: 'webhook:hooks.example.com', status: 'pending', attempts: 3, lastError: 'HTTP 503' }));
    expect(one.body.notifications.some((n: { destination: string }) => n.destination === 'slack:CACME')).toBe(true);
    expect(one.text).not.toContain('secret-token');
    // Fewer events than a page: the whole timeline, and nothing after it.
    expect(one.body.eventsNext).toBeNull();
  });

  it('pages an alert\'s timeline oldest first with `cursor` and `limit` (eventsNext), the owner history whole on every page, each page\'s deliveries with it', async () => {
    const wf = await t.db.selectFrom('workflows').selectAll().where('tenantId', '=', 'acme').where('name', '=', 'report').executeTakeFirstOrThrow();
    const long = await insertAlert(t.db, wf.id, { openedAt: minute(10) });
    await addEvent(t.db, long.id, 'opened', { now: minute(10) });
    await addEvent(t.db, long.id, 'owner_changed', { now: minute(11), actor: 'U0ALICE', changes: { ownerUser: 'U0ALICE' }, data: { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE' } });
    for (let i = 0; i < 5; i++) await addEvent(t.db, long.id, 'failure_recorded', { now: minute(20 + i), data: { consecutiveFailures: i + 2 } });

    const first = await acme('GET', `/api/v1/alerts/${long.id}?limit=3`);
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: { kind: string }) => e.kind)).toEqual(['opened', 'owner_changed', 'failure_recorded']);
    expect(first.body.eventsNext).toBe(String(first.body.events[2].id));
    const second = await acme('GET', `/api/v1/alerts/${long.id}?limit=3&cursor=${first.body.eventsNext}`);
    expect(second.body.events.map((e: { data: { consecutiveFailures: number } }) => e.data.consecutiveFailures)).toEqual([3, 4, 5]);
    expect(second.body.ownerHistory).toMatchObject([{ actor: 'U0ALICE', toUser: 'U0ALICE' }]);
    const shown = new Set(second.body.events.map((e: { id: number }) => e.id));
    expect(second.body.notifications.length).toBeGreaterThan(0);
    expect(second.body.notifications.every((n: { eventId: number }) => shown.has(n.eventId))).toBe(true);
    const last = await acme('GET', `/api/v1/alerts/${long.id}?limit=3&cursor=${second.body.eventsNext}`);
    expect(last.body.events).toHaveLength(1);
    expect(last.body.eventsNext).toBeNull();
    // Without parameters: the first page as large as a page may be (200), so a short timeline comes whole, as before paging.
    expect((await acme('GET', `/api/v1/alerts/${long.id}`)).body.events).toHaveLength(7);

    for (const bad of ['limit=0', 'limit=201', 'limit=ten', 'cursor=0', 'cursor=-3', 'cursor=abc', 'after=5']) {
      const r = await acme('GET', `/api/v1/alerts/${long.id}?${bad}`);
      expect(r.status, bad).toBe(400);
    }
  });
});
