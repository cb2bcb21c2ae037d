import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually, finishedRun } from './support.js';

const ADMIN = 'admin-token-0123456789abcdef';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;
let admin: ReturnType<typeof apiClient>;
let acme: ReturnType<typeof apiClient>;
let acmeToken: string;

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock('2026-03-10T02:05:20Z');
  await makeTenant(t.db);
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  app = await startTestApp(t, { API_TOKEN: ADMIN, HTTP_LAUNCHER_ALLOWED_HOSTS: 'jobs.example.com' }, { clock });
  admin = apiClient(app.url, ADMIN);
  const minted = await admin('POST', '/api/v1/tenants/acme/token');
  expect(minted.status).toBe(201);
  acmeToken = minted.body.token;
  acme = apiClient(app.url, acmeToken);
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const quality = () =>
  makeWorkflow(t.db, { name: `quality-${Math.random().toString(36).slice(2, 7)}`, cron: '*/5 * * * *', nextTickAt: at('2026-03-10T02:10:00Z') });

describe('authentication', () => {
  it('refuses a missing or wrong token with 401 and a JSON reason', async () => {
    const none = await apiClient(app.url)('GET', '/api/v1/workflows');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('Bearer') });
    const wrong = await apiClient(app.url, 'sbt_not-a-real-token')('GET', '/api/v1/workflows');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('unauthorized');
  });

  it('stores only the hash of a minted tenant token, and a new token revokes the old one', async () => {
    const row = await t.db.selectFrom('tenants').select('apiTokenHash').where('id', '=', 'globex').executeTakeFirstOrThrow();
    expect(row.apiTokenHash).toBeNull();
    const first = await admin('POST', '/api/v1/tenants/globex/token');
    const stored = await t.db.selectFrom('tenants').select('apiTokenHash').where('id', '=', 'globex').executeTakeFirstOrThrow();
    expect(stored.apiTokenHash).toBe(hashToken(first.body.token));
    expect(stored.apiTokenHash).not.toContain(first.body.token);
    expect((await apiClient(app.url, first.body.token)('GET', '/api/v1/tenants')).body.tenants).toEqual([expect.objectContaining({ id: 'globex' })]);
    const second = await admin('POST', '/api/v1/tenants/globex/token');
    expect((await apiClient(app.url, first.body.token)('GET', '/api/v1/tenants')).status).toBe(401);
    expect((await apiClient(app.url, second.body.token)('GET', '/api/v1/tenants')).status).toBe(200);
  });

  it('keeps tenant endpoints for the admin: a tenant token gets 403, an unknown tenant 404', async () => {
    expect((await acme('POST', '/api/v1/tenants/acme/token')).status).toBe(403);
    expect((await acme('PUT', '/api/v1/tenants/initech', { name: 'Initech' })).status).toBe(403);
    expect((await admin('POST', '/api/v1/tenants/nobody/token')).status).toBe(404);
    const created = await admin('PUT', '/api/v1/tenants/initech', { name: 'Initech', channel: 'CINITECH' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'initech', name: 'Initech', channel: 'CINITECH', source: 'api', hasToken: false });
    const bad = await admin('PUT', '/api/v1/tenants/Bad%20Id', { name: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/id: .*lowercase.*\(got "Bad Id"\)/);
    const taken = await admin('PUT', '/api/v1/tenants/hooli', { name: 'Hooli', channel: 'CINITECH' });
    expect(taken.status).toBe(409);
  });
});

describe('POST /api/v1/runs and /api/v1/runs/{id}', () => {
  it('matches a run without tick to the latest fire time within the grace, then finishes it idempotently', async () => {
    const wf = await quality();
    const started = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ tick: '2026-03-10T02:05:00.000Z', status: 'running', trigger: 'schedule' });

    const done = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'failed', error: 'relation "orders" does not exist', stage: 'load', rows: 0 });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('failed');
    const again = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'failed', error: 'whatever' });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    const differs = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'succeeded' });
    expect(differs.status).toBe(409);
    expect(differs.body).toMatchObject({ error: 'already_finished', message: expect.stringContaining('failed') });
    const row = await t.db.selectFrom('runs').selectAll().where('id', '=', started.body.id).executeTakeFirstOrThrow();
    // Evaluated with the report that ended it (src/engine/evaluate-now.ts), not left for a poller.
    expect(row).toMatchObject({ status: 'failed', error: 'relation "orders" does not exist', stage: 'load', rows: 0, processedAt: clock.now() });

    // The tick is now taken: a second report for the same moment is an external run outside any tick.
    const second = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'succeeded' });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ tick: null, trigger: 'external', status: 'succeeded' });
  });

  it('an end over the API: its status is the verdict and its exit code a detail kept as given (robocopy succeeds with 1, a Windows crash is negative); a failure without an error reads its exit code', async () => {
    const wf = await quality();
    const end = async (externalId: string, report: Record<string, unknown>) => {
      const started = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', externalId });
      const done = await acme('POST', `/api/v1/runs/${started.body.id}`, report);
      expect(done.status, externalId).toBe(200);
      return t.db.selectFrom('runs').select(['status', 'exitCode', 'error']).where('id', '=', started.body.id).executeTakeFirstOrThrow();
    };
    expect(await end('oom', { status: 'failed', exitCode: 137 })).toEqual({ status: 'failed', exitCode: 137, error: 'killed by SIGKILL (exit code 137)' });
    expect(await end('win', { status: 'failed', exitCode: -1073741819 })).toEqual({ status: 'failed', exitCode: -1073741819, error: 'exited with code -1073741819' });
    expect(await end('check', { status: 'failed', exitCode: 0 })).toEqual({ status: 'failed', exitCode: 0, error: 'failed (reported over the API) with exit code 0' });
    expect(await end('robocopy', { status: 'succeeded', exitCode: 1 })).toEqual({ status: 'succeeded', exitCode: 1, error: null });
    expect(await end('said', { status: 'failed', exitCode: 2, error: 'no such table' })).toEqual({ status: 'failed', exitCode: 2, error: 'no such table' });
    // Not an integer, or past the column: 400 naming the field.
    const started = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', externalId: 'bad' });
    for (const exitCode of [1.5, 2 ** 31, '3']) {
      const refused = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'failed', exitCode });
      expect(refused.status, String(exitCode)).toBe(400);
      expect(JSON.stringify(refused.body), String(exitCode)).toContain('exitCode');
    }
  });

  it('records a run reported only by its end, at an explicit tick, and refuses a tick that is not a fire time or already taken', async () => {
    const wf = await quality();
    const ok = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'succeeded', tick: '2026-03-10T01:55:00Z', rows: 12 });
    expect(ok.status).toBe(201);
    expect(ok.body.tick).toBe('2026-03-10T01:55:00.000Z');
    const taken = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', tick: '2026-03-10T01:55:00Z' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ error: 'tick_taken', run: { id: ok.body.id } });
    const odd = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', tick: '2026-03-10T01:57:00Z' });
    expect(odd.status).toBe(400);
    expect(odd.body.message).toMatch(/body\.tick: 2026-03-10T01:57:00.000Z is not a fire time.*01:55:00/);
    const future = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', tick: '2026-03-10T02:10:00Z' });
    expect(future.status).toBe(400);
    expect(future.body.message).toBe('body.tick: 2026-03-10T02:10:00.000Z has not come yet');
  });

  it('creates one run for the same externalId sent twice, and finishes a running one with a later terminal report', async () => {
    const wf = await quality();
    const report = { tenant: 'acme', workflow: wf.name, status: 'succeeded', externalId: 'airflow:dag_run:42' };
    const first = await acme('POST', '/api/v1/runs', report);
    const second = await acme('POST', '/api/v1/runs', report);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, duplicate: true });
    const conflicting = await acme('POST', '/api/v1/runs', { ...report, status: 'failed' });
    expect(conflicting.status).toBe(409);
    expect(conflicting.body.error).toBe('conflicting_report');

    const start = await acme('POST', '/api/v1/runs', { ...report, status: 'running', externalId: 'k8s:job-7' });
    const end = await acme('POST', '/api/v1/runs', { ...report, status: 'failed', externalId: 'k8s:job-7', error: 'OOMKilled' });
    expect(end.status).toBe(200);
    expect(end.body).toMatchObject({ id: start.body.id, status: 'failed' });
    const rows = await t.db.selectFrom('runs').select(['externalId', 'status', 'error']).where('workflowId', '=', wf.id).orderBy('id').execute();
    expect(rows).toEqual([
      { externalId: 'airflow:dag_run:42', status: 'succeeded', error: null },
      { externalId: 'k8s:job-7', status: 'failed', error: 'OOMKilled' },
    ]);
  });

  it('a resent success that the output checks failed (minRows) is the same report, not a conflict; a start arriving after its end is the same run', async () => {
    const wf = await makeWorkflow(t.db, { name: `rows-${Math.random().toString(36).slice(2, 7)}`, cron: '*/5 * * * *', policy: JSON.stringify({ minRows: 10 }) });
    const report = { tenant: 'acme', workflow: wf.name, status: 'succeeded', rows: 2, externalId: 'airflow:dag_run:7' };
    const first = await acme('POST', '/api/v1/runs', report);
    expect(first.status).toBe(201);
    // Evaluated with the report: now failed "empty output".
    expect(await t.db.selectFrom('runs').select(['status', 'error']).where('id', '=', first.body.id).executeTakeFirstOrThrow()).toEqual({
      status: 'failed',
      error: 'empty output: 2 rows, expected at least 10',
    });
    const resent = await acme('POST', '/api/v1/runs', report);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: first.body.id, duplicate: true });
    expect((await acme('POST', '/api/v1/runs', { ...report, status: 'failed' })).status).toBe(409);

    const started = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', externalId: 'k8s:job-8' });
    expect((await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'succeeded', rows: 0 })).status).toBe(200);
    const again = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'succeeded', rows: 0 });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    const differs = await acme('POST', `/api/v1/runs/${started.body.id}`, { status: 'failed' });
    expect(differs.status).toBe(409);
    expect(differs.body.message).toBe(`run ${started.body.id} already finished as succeeded`);

    // The end overtook its start (two messages sent at once): the late start is the same run, acknowledged.
    const end = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', error: 'OOMKilled', externalId: 'k8s:job-9' });
    expect(end.status).toBe(201);
    const lateStart = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', externalId: 'k8s:job-9' });
    expect(lateStart.status).toBe(200);
    expect(lateStart.body).toMatchObject({ id: end.body.id, status: 'failed', duplicate: true });
    expect(await t.db.selectFrom('runs').select('status').where('externalId', '=', 'k8s:job-9').execute()).toEqual([{ status: 'failed' }]);
  });

  it('names the field and value of each validation failure (400), and refuses bad JSON (400) and oversized bodies (413)', async () => {
    const wf = await quality();
    const status = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'ok' });
    expect(status.status).toBe(400);
    expect(status.body.error).toBe('invalid_request');
    expect(status.body.message).toMatch(/body: status: .*\(got "ok"\)/);
    const unknown = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'running', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('unknown field "colour"');
    const rows = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'succeeded', rows: -1 });
    expect(rows.body.issues).toEqual([expect.stringMatching(/rows: .*\(got -1\)/)]);
    const tick = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'succeeded', tick: 'yesterday' });
    expect(tick.status).toBe(400);
    expect(tick.body.message).toMatch(/tick: .*\(got "yesterday"\)/);
    const json = await acme('POST', '/api/v1/runs', '{"tenant": "acme",', { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(json.body.error).toBe('invalid_json');
    const big = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', log: 'x'.repeat(300_000) });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('body_too_large');
    const id = await acme('POST', '/api/v1/runs/abc', { status: 'succeeded' });
    expect(id.status).toBe(400);
    expect(id.body.message).toContain('"abc"');
    const missingRun = await acme('POST', '/api/v1/runs/999999', { status: 'succeeded' });
    expect(missingRun.status).toBe(404);
    const missingWf = await acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'no-such', status: 'running' });
    expect(missingWf.status).toBe(404);
    expect(await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).execute()).toEqual([]);
  });

  it('answers 404 to a tenant token reaching another tenant, exactly as for something that does not exist', async () => {
    const theirs = await makeWorkflow(t.db, { tenantId: 'globex', name: 'secret-pipeline', cron: '0 * * * *' });
    const theirRun = await makeRun(t.db, { workflowId: theirs.id, status: 'running', finishedAt: null });
    const asRun = await acme('POST', '/api/v1/runs', { tenant: 'globex', workflow: 'secret-pipeline', status: 'running' });
    const nothing = await acme('POST', '/api/v1/runs', { tenant: 'globex', workflow: 'no-such-thing', status: 'running' });
    expect(asRun.status).toBe(404);
    expect(nothing.status).toBe(404);
    const view = await acme('GET', '/api/v1/workflows/globex/secret-pipeline');
    expect(view.status).toBe(404);
    const finish = await acme('POST', `/api/v1/runs/${theirRun.id}`, { status: 'succeeded' });
    const finishNothing = await acme('POST', '/api/v1/runs/987654', { status: 'succeeded' });
    expect(finish.status).toBe(404);
    expect(finish.body.message.replace(String(theirRun.id), 'N')).toBe(finishNothing.body.message.replace('987654', 'N'));
    for (const answer of [asRun, view, finish]) expect(answer.text).not.toMatch(/Globex/);
    const list = await acme('GET', '/api/v1/workflows');
    expect(list.body.workflows.map((w: { tenant: string }) => w.tenant)).not.toContain('globex');
    const still = await t.db.selectFrom('runs').select('status').where('id', '=', theirRun.id).executeTakeFirstOrThrow();
    expect(still.status).toBe('running');
    // The admin sees everything.
    expect((await admin('GET', '/api/v1/workflows/globex/secret-pipeline')).status).toBe(200);
  });
});

describe('workflows API', () => {
  it('stores every time zone it is given by its canonical name, whatever the case typed (CRON_TZ names a file cron looks up)', async () => {
    const created = await acme('PUT', '/api/v1/workflows/acme/zone-typed-lower', {
      cron: '0 2 * * *',
      timezone: 'europe/berlin',
      policy: { completeBy: { time: '06:00', timeZone: 'america/new_york' } },
      maintenance: [{ cron: '0 1 * * 0', duration: '1h', timezone: 'US/Pacific' }],
    });
    expect(created.status).toBe(201);
    expect(created.body.schedule).toMatchObject({ timezone: 'Europe/Berlin', nextTickAt: '2026-03-11T01:00:00.000Z' });
    expect(created.body.ping.crontab).toMatch(/^CRON_TZ=Europe\/Berlin\n0 2 \* \* \* rid=/);
    const stored = await t.db.selectFrom('workflows').select(['timezone', 'policy', 'maintenance']).where('name', '=', 'zone-typed-lower').executeTakeFirstOrThrow();
    expect(stored.timezone).toBe('Europe/Berlin');
    expect(stored.policy.completeBy).toEqual({ time: '06:00', timeZone: 'America/New_York' });
    // An alias is the zone it names (US/Pacific is a backward link a system zoneinfo may lack).
    expect(stored.maintenance.map((m) => m.timezone)).toEqual(['America/Los_Angeles']);
    const got = await acme('GET', '/api/v1/workflows/acme/zone-typed-lower');
    expect(got.body.schedule.timezone).toBe('Europe/Berlin');
    expect(got.body.ping.crontab).toMatch(/^CRON_TZ=Europe\/Berlin\n/);
    expect((await acme('DELETE', '/api/v1/workflows/acme/zone-typed-lower')).status).toBe(200);
  });

  it('creates, shows (derived and overridden profile side by side), updates and deletes an API workflow', async () => {
    const created = await acme('PUT', '/api/v1/workflows/acme/nightly-export', {
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      policy: { alertAfter: 2 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tenant: 'acme', name: 'nightly-export', mode: 'observed', source: 'api' });
    expect(created.body.schedule).toMatchObject({ cron: '0 2 * * *', timezone: 'Europe/Berlin', nextTickAt: '2026-03-11T01:00:00.000Z' });
    expect(created.body.profile.derived).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical' });
    expect(created.body.profile.overrides).toEqual({ alertAfter: 2 });
    expect(created.body.profile.effective).toMatchObject({ retries: 3, alertAfter: 2, firstSeverity: 'critical' });
    expect(created.body.ping.crontab).toMatch(/^CRON_TZ=Europe\/Berlin\n0 2 \* \* \* rid=.*; curl -fsS .*\/ping\/[\w-]+\/start\?rid=\$rid"; .* 2>&1; rc=\$\?; .*\/ping\/[\w-]+\/\$rc\?rid=\$rid"; /);
    expect(created.body.openAlert).toBeNull();

    const got = await acme('GET', '/api/v1/workflows/acme/nightly-export');
    expect(got.status).toBe(200);
    expect(got.body.ping.url).toBe(created.body.ping.url);

    const updated = await acme('PUT', '/api/v1/workflows/acme/nightly-export', {
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: 'per-target-secret-123', headers: { authorization: 'Bearer x' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ mode: 'managed', schedule: { nextTickAt: '2026-03-11T02:00:00.000Z' } });
    expect(updated.body.launcher).toEqual({ kind: 'http', url: 'https://jobs.example.com/run', mode: 'sync', headers: ['authorization'], ownSecret: true });
    expect(updated.text).not.toContain('per-target-secret-123');
    expect(updated.body.ping.url).toBe(created.body.ping.url);

    const listed = await acme('GET', '/api/v1/workflows');
    expect(listed.body.workflows).toContainEqual(expect.objectContaining({ name: 'nightly-export', mode: 'managed', cron: '0 3 * * *', lastRun: null, openAlert: null }));

    expect((await acme('DELETE', '/api/v1/workflows/acme/nightly-export')).status).toBe(200);
    expect((await acme('GET', '/api/v1/workflows/acme/nightly-export')).status).toBe(404);
    expect((await acme('DELETE', '/api/v1/workflows/acme/nightly-export')).status).toBe(404);
    const row = await t.db.selectFrom('workflows').select('enabled').where('name', '=', 'nightly-export').executeTakeFirstOrThrow();
    expect(row.enabled).toBe(false);
  });

  it('validates a PUT like the workflows file, naming field and value, and refuses to edit a file workflow (409)', async () => {
    const cron = await acme('PUT', '/api/v1/workflows/acme/bad', { cron: '61 * * * *' });
    expect(cron.status).toBe(400);
    expect(cron.body.message).toMatch(/cron: invalid cron.*\(got "61 \* \* \* \*"\)/);
    // A cron that never fires is refused at once, naming the fields at odds (it must not loop looking for its first tick).
    const never = await acme('PUT', '/api/v1/workflows/acme/bad', { cron: '0 0 30 2 *' });
    expect(never.status).toBe(400);
    expect(never.body.message).toMatch(/cron: invalid cron: never fires: no month the month field "2" names has the day of month "30".*\(got "0 0 30 2 \*"\)/);
    const managed = await acme('PUT', '/api/v1/workflows/acme/bad', { cron: '0 * * * *', mode: 'managed' });
    expect(managed.body.message).toMatch(/mode: a managed workflow needs a launcher/);
    const mismatch = await acme('PUT', '/api/v1/workflows/acme/bad', { name: 'other', cron: '0 * * * *' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toContain('body.name');
    const notObject = await acme('PUT', '/api/v1/workflows/acme/bad', '[1,2]', { 'content-type': 'application/json' });
    expect(notObject.status).toBe(400);
    const otherTenant = await acme('PUT', '/api/v1/workflows/globex/sneaky', { cron: '0 * * * *' });
    expect(otherTenant.status).toBe(404);
    expect(await t.db.selectFrom('workflows').select('id').where('name', 'in', ['bad', 'sneaky']).execute()).toEqual([]);

    await makeWorkflow(t.db, { name: 'from-file', source: 'file', cron: '0 * * * *' });
    const fileOwned = await acme('PUT', '/api/v1/workflows/acme/from-file', { cron: '5 * * * *' });
    expect(fileOwned.status).toBe(409);
    expect(fileOwned.body.error).toBe('owned_by_file');
    expect((await acme('DELETE', '/api/v1/workflows/acme/from-file')).status).toBe(409);
  });

  it('runs a workflow now (202), refusing one without a launcher or already running (409) and an unknown one (404)', async () => {
    const plain = await quality();
    const noLauncher = await acme('POST', `/api/v1/workflows/acme/${plain.name}/run`);
    expect(noLauncher.status).toBe(409);
    expect(noLauncher.body.error).toBe('no_launcher');

    // A command launcher is the operator's to set (docs/security.md); the tenant may still run it.
    await admin('PUT', '/api/v1/workflows/acme/slow-job', { cron: '0 4 * * *', mode: 'observed', launcher: { kind: 'command', command: 'sleep 0.5; echo done' } });
    const started = await acme('POST', '/api/v1/workflows/acme/slow-job/run');
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', trigger: 'manual', requestedBy: 'api:acme' });
    const busy = await acme('POST', '/api/v1/workflows/acme/slow-job/run');
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: 'already_running', run: { id: started.body.id } });
    const done = await finishedRun(t.db, started.body.id);
    expect(done).toMatchObject({ status: 'succeeded', logExcerpt: 'done\n' });

    expect((await acme('POST', '/api/v1/workflows/acme/no-such/run')).status).toBe(404);
    expect((await acme('POST', '/api/v1/no-such-endpoint')).status).toBe(404);
  });
});

describe('GET /metrics', () => {
  it('reports runs by status, poll lag, open alerts, outbox depth and loop durations in the Prometheus text format', async () => {
    const wf = await quality();
    await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T01:00:00Z'), status: 'failed', finishedAt: at('2026-03-10T02:04:20Z'), processedAt: null });
    const response = await fetch(`${app.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    const failed = await t.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'failed').executeTakeFirstOrThrow();
    expect(text).toContain(`scheduler_runs{status="failed"} ${failed.n}`);
    // The oldest unprocessed finished run is older than or as old as the one just made (02:04:20 at 02:05:20).
    const lag = Number(/^scheduler_poll_lag_seconds (\S+)$/m.exec(text)![1]);
    expect(lag).toBeGreaterThanOrEqual(60);
    expect(text).toMatch(/^scheduler_open_alerts\{severity="critical"\} 0$/m);
    expect(text).toMatch(/^scheduler_outbox_depth 0$/m);
    expect(text).toMatch(/^scheduler_outbox_oldest_pending_seconds 0$/m);
    expect(text).toContain('# TYPE scheduler_slack_calls_total counter');
    expect(text).toContain('# TYPE scheduler_loop_tick_seconds histogram');
    expect(text).toContain('# TYPE scheduler_loop_db_errors_total counter');
    expect(text).toContain('# TYPE scheduler_report_evaluations_total counter');
    expect(text).toMatch(/^scheduler_database_up 1$/m);
    // prom-client's default process metrics, on this app's own registry.
    expect(text).toMatch(/^process_cpu_user_seconds_total \S+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
  });
});
