import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { failOverdueRuns } from '../../src/engine/freshness.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A job reported from outside runs past its timeout: the bot fails it as
 * timed out, and then the job's own end arrives. It is kept on the run, the
 * timeout standing, and an open alert's thread hears it; before, a ping's was
 * answered OK and dropped, an API report's refused as a conflict.
 */
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;
const ADMIN = 'admin-token-late-end-0123456789abcdef';

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock('2026-03-10T02:00:30Z');
  await makeTenant(t.db);
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

/** A nightly with a one-hour timeout, alerting on its first failure, started at 02:00:30 and failed as timed out at 03:00:30. */
async function timedOutNightly(name: string, day: string, start: (pingKey: string) => Promise<unknown>) {
  clock.set(`${day}T02:00:30Z`);
  const wf = await makeWorkflow(t.db, { name, cron: '0 2 * * *', mode: 'observed', nextTickAt: new Date(Date.parse(`${day}T02:00:00Z`) + 86_400_000), policy: JSON.stringify({ timeoutSeconds: 3600, alertAfter: 1 }) });
  await start(wf.pingKey!);
  clock.set(`${day}T03:00:31Z`);
  expect(await failOverdueRuns(app.deps, clock.now())).toBe(1);
  await pollFinishedRuns(app.deps);
  const [run] = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).execute();
  expect(run).toMatchObject({ status: 'failed', error: 'timed out' });
  const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
  expect(alert.status).toBe('open');
  return { wf, run: run!, alert };
}

const eventsOf = (alertId: number) => t.db.selectFrom('alertEvents').select(['kind', 'data']).where('alertId', '=', alertId).orderBy('id').execute();

describe('the end of a run the bot failed as timed out', () => {
  it('a ping with its rid: kept as the run\'s note, the run still failed, the alert\'s thread told once (a repeat changes nothing)', async () => {
    const ping = (key: string, what: string, body?: string) => fetch(`${app.url}/ping/${key}/${what}?rid=7c1e`, { method: 'POST', ...(body ? { body } : {}) });
    const { wf, run, alert } = await timedOutNightly('nightly-ping', '2026-03-10', (key) => ping(key, 'start'));
    clock.set('2026-03-10T03:14:31Z');
    const answer = await ping(wf.pingKey!, '0');
    expect([answer.status, await answer.text()]).toEqual([200, 'OK\n']);
    const after = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'failed', error: 'timed out', outcomeNote: 'the job ended succeeded 14m 01s after its timeout, at 2026-03-10T03:14:31.000Z; the timeout stands' });
    expect((await eventsOf(alert.id)).at(-1)).toEqual({ kind: 'run_finished', data: { runId: run.id, status: 'timed_out', tick: '2026-03-10T02:00:00.000Z', late: { status: 'succeeded', error: null, lateSeconds: 841 } } });
    const outbox = await t.db.selectFrom('notifications').innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId').select('alertEvents.kind').where('notifications.alertId', '=', alert.id).execute();
    expect(outbox.map((n) => n.kind)).toContain('run_finished');
    // curl --retry sends it again: the same report.
    const events = (await eventsOf(alert.id)).length;
    expect((await ping(wf.pingKey!, '0')).status).toBe(200);
    expect(await eventsOf(alert.id)).toHaveLength(events);
    expect((await t.db.selectFrom('alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('open');
  });

  it('over the API by run id or by externalId: 200 with the note, a failure\'s error kept in it', async () => {
    const token = { authorization: `Bearer ${ADMIN}` };
    const post = (path: string, body: object) => fetch(`${app.url}/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...token }, body: JSON.stringify(body) });
    const report = { tenant: 'acme', workflow: 'nightly-api', externalId: 'job-42' };
    const { run } = await timedOutNightly('nightly-api', '2026-03-11', () => post('/runs', { ...report, status: 'running' }));
    clock.set('2026-03-11T03:20:31Z');
    const answer = await post('/runs', { ...report, status: 'failed', error: 'OOMKilled' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ id: run.id, status: 'failed', endedLate: true, note: 'the job ended failed (OOMKilled) 20m 01s after its timeout, at 2026-03-11T03:20:31.000Z; the timeout stands' });
    // By id, once more: the same report, a duplicate.
    const again = await post(`/runs/${run.id}`, { status: 'failed', error: 'OOMKilled' });
    expect([again.status, (await again.json()).duplicate]).toEqual([200, true]);
  });
});
