import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { checkFreshness } from '../../src/engine/freshness.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { signLaunchRequest, verifyLaunchSignature } from '../../src/launch/signature.js';
import { renewRunLeases } from '../../src/ledger/run-leases.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { startHttpTarget, type ReceivedRequest } from '../helpers/http-target.js';
import { eventually, finishedRun } from './support.js';

const SECRET = 'launcher-secret-0123456789';
const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
let clock: ManualClock;

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock('2026-03-10T02:00:00Z');
  await makeTenant(t.db);
  target = await startHttpTarget();
  // The target listens on loopback: a tenant's launcher may reach it only because the operator allows it.
  app = await startTestApp(t, { LAUNCHER_SECRET: SECRET, API_TOKEN: ADMIN, PUBLIC_URL: 'https://scheduler.example.com/', HTTP_LAUNCHER_ALLOWED_HOSTS: '127.0.0.1' }, { clock });
});
afterAll(async () => {
  await app.stop();
  await target.stop();
  await t.drop();
});

/** A due managed workflow with an http launcher, fired by the tick scheduler; resolves with its run row and the request the target got. */
async function fire(mode: 'sync' | 'callback', policy: Record<string, number> = {}) {
  const wf = await makeWorkflow(t.db, {
    cron: '0 * * * *',
    mode: 'managed',
    launcher: JSON.stringify({ kind: 'http', url: `${target.url}/jobs/run`, mode, headers: { 'x-team': 'data' }, secret: SECRET }),
    policy: JSON.stringify(policy),
    nextTickAt: clock.now(),
  });
  const before = target.received.length;
  await fireDueTicks(app.deps);
  const run = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
  const request = await eventually(() => target.received.slice(before).find((r) => JSON.parse(r.body).runId === run.id));
  return { wf, run, request };
}

const verify = (r: ReceivedRequest) =>
  verifyLaunchSignature(SECRET, { body: r.body, timestamp: r.headers['x-scheduler-timestamp'] as string, signature: r.headers['x-scheduler-signature'] as string }, clock.now());

describe('http launcher', () => {
  it('sync: a signed POST with the run; a 2xx answer is success, with what the target reports', async () => {
    target.respondWith(() => ({ status: 200, body: JSON.stringify({ rows: 42, stage: 'load' }) }));
    const { wf, run, request } = await fire('sync');
    expect(request.method).toBe('POST');
    expect(request.headers['x-team']).toBe('data');
    expect(request.headers['content-type']).toBe('application/json');
    expect(verify(request)).toEqual({ ok: true });
    expect(JSON.parse(request.body)).toEqual({
      runId: run.id,
      tenant: 'acme',
      workflow: wf.name,
      tick: '2026-03-10T02:00:00.000Z',
      attempt: 1,
      trigger: 'schedule',
      mode: 'sync',
      timeoutSeconds: expect.any(Number),
      callbackUrl: `https://scheduler.example.com/api/v1/runs/${run.id}`,
      callbackToken: expect.stringMatching(new RegExp(`^sbr_${run.id}_[0-9a-f]{64}$`)),
    });
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'succeeded', rows: 42, stage: 'load' });
  });

  it('sync: what the API would refuse in an answer is dropped, not stored: a negative count, a link that is not http(s)', async () => {
    for (const logUrl of ['javascript:alert(document.cookie)', 'file:///etc/passwd', 'https://ci.example.com/build/"onmouseover="x']) {
      target.respondWith(() => ({ status: 200, body: JSON.stringify({ rows: -5, stage: 'load', logUrl }) }));
      const { run } = await fire('sync');
      expect(await finishedRun(t.db, run.id), logUrl).toMatchObject({ status: 'succeeded', rows: null, stage: 'load', logUrl: null });
    }
    target.respondWith(() => ({ status: 200, body: JSON.stringify({ rows: 0, logUrl: 'HTTPS://ci.example.com/build/8' }) }));
    const { run } = await fire('sync');
    expect(await finishedRun(t.db, run.id)).toMatchObject({ rows: 0, logUrl: 'HTTPS://ci.example.com/build/8' });
  });

  it('the signature fails for a changed body, another secret or a stale timestamp', async () => {
    const body = '{"runId":1}';
    const ts = Math.floor(clock.now().getTime() / 1000);
    const signature = signLaunchRequest(SECRET, ts, body);
    expect(verifyLaunchSignature(SECRET, { body, timestamp: String(ts), signature }, clock.now())).toEqual({ ok: true });
    expect(verifyLaunchSignature(SECRET, { body: '{"runId":2}', timestamp: String(ts), signature }, clock.now())).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyLaunchSignature('another-secret-123456', { body, timestamp: String(ts), signature }, clock.now())).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyLaunchSignature(SECRET, { body, timestamp: String(ts), signature }, new Date(clock.now().getTime() + 301_000))).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(verifyLaunchSignature(SECRET, { body, timestamp: undefined, signature }, clock.now())).toEqual({ ok: false, reason: 'missing_headers' });
  });

  it('sync: any other answer is a failure carrying the body excerpt', async () => {
    target.respondWith(() => ({ status: 503, body: 'warehouse is in maintenance\nretry later' }));
    const { run } = await fire('sync');
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'HTTP 503: warehouse is in maintenance', logExcerpt: 'warehouse is in maintenance\nretry later' });
  });

  it('sync: a target that does not answer within the run timeout fails it as timed out', async () => {
    target.respondWith(() => ({ status: 200, delayMs: 3_000 }));
    const { run } = await fire('sync', { timeoutSeconds: 1 });
    const done = await finishedRun(t.db, run.id);
    expect(done).toMatchObject({ status: 'failed', error: 'timed out after 1s' });
  });

  it('callback: 2xx accepts; the far side finishes the run through the API with its per-run token, which opens nothing else', async () => {
    target.respondWith(() => ({ status: 202 }));
    const { run, request } = await fire('callback');
    const { callbackUrl, callbackToken } = JSON.parse(request.body);
    // Accepted: the lease is dropped, so only the deadline can end it, whichever replica is alive.
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    expect((await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).status).toBe('running');

    const path = new URL(callbackUrl).pathname;
    const asRun = apiClient(app.url, callbackToken);
    expect((await asRun('GET', '/api/v1/workflows')).status).toBe(404);
    expect((await asRun('POST', `/api/v1/runs/${run.id + 1000}`, { status: 'succeeded' })).status).toBe(404);
    const forged = `sbr_${run.id}_${'0'.repeat(64)}`;
    expect((await apiClient(app.url, forged)('POST', path, { status: 'succeeded' })).status).toBe(401);

    const finished = await asRun('POST', path, { status: 'succeeded', rows: 7, logUrl: 'https://ci.example.com/build/7' });
    expect(finished.status).toBe(200);
    const row = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'succeeded', rows: 7, logUrl: 'https://ci.example.com/build/7' });
  });

  it('callback: a far side that calls back before answering its 202, then sends the callback again, ends the run once; a different end replayed is refused', async () => {
    let answer: { status: number; body: unknown } | undefined;
    target.respondWith(async (r) => {
      const { callbackUrl, callbackToken } = JSON.parse(r.body);
      answer = await apiClient(app.url, callbackToken)('POST', new URL(callbackUrl).pathname, { status: 'succeeded', rows: 3 });
      return { status: 202 };
    });
    const { run, request } = await fire('callback');
    await eventually(() => answer);
    expect(answer!.status).toBe(200);
    const { callbackUrl, callbackToken } = JSON.parse(request.body);
    const asRun = apiClient(app.url, callbackToken);
    const path = new URL(callbackUrl).pathname;
    // Its answer lost, the far side sends the same end again: the same run, said to be a duplicate.
    const again = await asRun('POST', path, { status: 'succeeded', rows: 3 });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect((await asRun('POST', path, { status: 'failed', error: 'replayed' })).status).toBe(409);
    // The 202 that came after the end hands nothing back: the row stays as the callback left it.
    await eventually(async () => target.received.some((r) => JSON.parse(r.body).runId === run.id));
    const row = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'succeeded', rows: 3, leaseOwner: null, error: null });
    target.respondWith(() => ({ status: 200 }));
  });

  it('callback: one that comes after the run timed out is kept as its note, the verdict standing (200 endedLate); another run\'s token gets 404; a token from before the secret was rotated gets 401', async () => {
    target.respondWith(() => ({ status: 202 }));
    const { wf, run, request } = await fire('callback', { timeoutSeconds: 60 });
    const other = await fire('callback', { timeoutSeconds: 60 });
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    const { callbackUrl, callbackToken } = JSON.parse(request.body);
    const path = new URL(callbackUrl).pathname;
    // The other run's far side cannot end this one.
    expect((await apiClient(app.url, JSON.parse(other.request.body).callbackToken)('POST', path, { status: 'succeeded' })).status).toBe(404);
    // Past the deadline any replica fails it; the late callback does not change the verdict: it is kept as the run's
    // note, and said so (docs/alerts.md, late ends).
    await checkFreshness({ db: t.db, clock: new ManualClock(new Date(clock.now().getTime() + 61_000)) });
    const late = await apiClient(app.url, callbackToken)('POST', path, { status: 'succeeded' });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ id: run.id, status: 'failed', endedLate: true, note: expect.stringMatching(/^the job ended succeeded .* after its timeout, at .*; the timeout stands$/) });
    expect(await t.db.selectFrom('runs').select(['status', 'error']).where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', error: 'timed out' });
    // Only the first late end is kept: another is acknowledged and changes nothing.
    const again = await apiClient(app.url, callbackToken)('POST', path, { status: 'failed', error: 'boom' });
    expect([again.status, again.body.duplicate]).toEqual([200, true]);
    expect((await t.db.selectFrom('runs').select('outcomeNote').where('id', '=', run.id).executeTakeFirstOrThrow()).outcomeNote).toBe(late.body.note);
    // The launcher's secret rotated: tokens made with the old one no longer authenticate (docs/launchers.md).
    await t.db.updateTable('workflows').set({ launcher: JSON.stringify({ kind: 'http', url: `${target.url}/jobs/run`, mode: 'callback', secret: 'rotated-secret-0123456789' }) }).where('id', '=', wf.id).execute();
    expect((await apiClient(app.url, callbackToken)('POST', path, { status: 'succeeded' })).status).toBe(401);
  });

  it('callback: the tenant token may finish it too', async () => {
    target.respondWith(() => ({ status: 200 }));
    const { run } = await fire('callback');
    const token = (await apiClient(app.url, ADMIN)('POST', '/api/v1/tenants/acme/token')).body.token;
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    const answer = await apiClient(app.url, token)('POST', `/api/v1/runs/${run.id}`, { status: 'failed', error: 'dbt: 3 models failed' });
    expect(answer.status).toBe(200);
    expect((await finishedRun(t.db, run.id)).error).toBe('dbt: 3 models failed');
  });

  it('callback: no end by the timeout fails the run as timed out (not as worker lost while it waits)', async () => {
    target.respondWith(() => ({ status: 202 }));
    const { run } = await fire('callback', { timeoutSeconds: 300 });
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    clock.advance(120_000); // past any lease: still waiting for the far side
    await checkFreshness(app.deps);
    expect((await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).status).toBe('running');
    clock.advance(181_000);
    await checkFreshness(app.deps);
    const row = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', error: 'timed out' });
    // A late callback does not change the verdict: kept as the run's note.
    const late = await apiClient(app.url, ADMIN)('POST', `/api/v1/runs/${run.id}`, { status: 'succeeded' });
    expect([late.status, late.body.status, late.body.endedLate]).toEqual([200, 'failed', true]);
  });

  it('callback: a lease renewal that reaches the database after the accepted run was handed back does not take it back', async () => {
    target.respondWith(() => ({ status: 202 }));
    const { run } = await fire('callback', { timeoutSeconds: 3600 });
    await eventually(async () => (await t.db.selectFrom('runs').select('leaseOwner').where('id', '=', run.id).executeTakeFirstOrThrow()).leaseOwner === null);
    // The replica's renewal loop read its held runs while the accept was in flight; its UPDATE lands now.
    await renewRunLeases(app.deps, [run.id], clock.now());
    clock.advance(120_000);
    await checkFreshness(app.deps);
    // Still waiting for the far side: not "worker lost" because a lease nobody renews ran out.
    expect(await t.db.selectFrom('runs').select(['status', 'error', 'leaseOwner']).where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'running', error: null, leaseOwner: null });
  });

  it('a refused callback launch fails the run with the answer', async () => {
    target.respondWith(() => ({ status: 401, body: 'bad signature' }));
    const { run } = await fire('callback');
    expect(await finishedRun(t.db, run.id)).toMatchObject({ status: 'failed', error: 'HTTP 401: bad signature (permanent: not retried)' });
  });
});

describe('http launcher without a secret', () => {
  it('refuses to launch unsigned and says which setting is missing', async () => {
    const other = await createTestDatabase(2);
    try {
      await makeTenant(other.db);
      const c = new ManualClock('2026-03-10T02:00:00Z');
      const bare = await startTestApp(other, {}, { clock: c });
      try {
        const wf = await makeWorkflow(other.db, {
          cron: '0 * * * *',
          mode: 'managed',
          launcher: JSON.stringify({ kind: 'http', url: `${target.url}/x`, mode: 'sync', operatorSet: true }),
          nextTickAt: at('2026-03-10T02:00:00Z'),
        });
        await fireDueTicks(bare.deps);
        const row = await other.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
        expect(row).toMatchObject({ status: 'failed', error: expect.stringContaining('LAUNCHER_SECRET') });
      } finally {
        await bare.stop();
      }
    } finally {
      await other.drop();
    }
  });
});
