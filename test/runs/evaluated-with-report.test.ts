import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { INLINE_EVALUATIONS } from '../../src/engine/evaluate-now.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { reportRun } from '../../src/services/ingest.js';
import { RUNS_FINISHED_CHANNEL } from '../../src/ledger/runs.js';
import { counterValue, metrics } from '../../src/metrics.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually } from './support.js';

/**
 * A reported end is evaluated in the report's own transaction (issue 18,
 * src/engine/evaluate-now.ts): the alert and its outbox rows commit with the
 * report, no poller involved; where a poller's claim would skip the workflow,
 * the run is left to the pollers and they are told; and an evaluation that
 * throws never costs the report.
 */
const ADMIN = 'admin-token-0123456789abcdef';
const NOW = '2026-03-10T02:05:20Z';
const TICK = '2026-03-10T02:05:00.000Z';

let t: TestDatabase;
let clock: ManualClock;
let app: Awaited<ReturnType<typeof startTestApp>>;
let admin: ReturnType<typeof apiClient>;

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock(NOW);
  await makeTenant(t.db);
  // Loops off: nothing but the report's own transaction can evaluate the run.
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock, launchers: (wf) => (wf.name.startsWith('cursed') ? brokenResolver() : undefined) });
  admin = apiClient(app.url, ADMIN);
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

function brokenResolver(): never {
  throw new Error('launcher resolver broke');
}

const workflow = (name: string) => makeWorkflow(t.db, { name: `${name}-${Math.random().toString(36).slice(2, 7)}`, policy: { alertAfter: 1 } });
const fail = (name: string) => admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: name, status: 'failed', tick: TICK, error: 'warehouse unreachable' });
const runOf = (id: number) => t.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const evaluated = (result: 'with_report' | 'left_to_pollers' | 'failed') => counterValue(metrics.reportEvaluations, { result });
const openAlertOf = (workflowId: number) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', workflowId).where('status', '=', 'open').executeTakeFirst();

describe('a reported end evaluated with its report', () => {
  it('a failure reported over the API is an open alert with its outbox rows when the API answers', async () => {
    const wf = await workflow('nightly');
    const before = await evaluated('with_report');
    const res = await fail(wf.name);
    expect(res.status).toBe(201);
    expect(await evaluated('with_report')).toBe(before + 1);
    expect(await runOf(res.body.id)).toMatchObject({ status: 'failed', processedAt: clock.now(), errorGroup: expect.any(String) });
    const alert = await openAlertOf(wf.id);
    expect(alert).toMatchObject({ consecutiveFailures: 1, lastRunId: res.body.id });
    const rows = await t.db.selectFrom('notifications').select(['destination', 'status']).where('alertId', '=', alert!.id).execute();
    expect(rows).toEqual([{ destination: 'slack:CACME', status: 'pending' }]);
  });

  it('a failure ping, and a start then an end, are evaluated the same way', async () => {
    const pinged = await workflow('pinged');
    expect((await fetch(`${app.url}/ping/${pinged.pingKey}/fail`, { method: 'POST' })).status).toBe(200);
    expect(await openAlertOf(pinged.id)).toBeDefined();

    const finished = await workflow('finished');
    const started = await admin('POST', '/api/v1/runs', { tenant: 'acme', workflow: finished.name, status: 'running', tick: TICK });
    expect(await openAlertOf(finished.id)).toBeUndefined();
    expect((await admin('POST', `/api/v1/runs/${started.body.id}`, { status: 'failed', error: 'disk full' })).status).toBe(200);
    expect(await runOf(started.body.id)).toMatchObject({ status: 'failed', processedAt: clock.now() });
    expect(await openAlertOf(finished.id)).toMatchObject({ lastRunId: started.body.id });
  });

  it('while another transaction holds an upstream, the run is left to the pollers and they are told', async () => {
    const upstream = await workflow('load');
    const downstream = await workflow('mart');
    await t.db.insertInto('workflowDependencies').values({ workflowId: downstream.id, upstreamId: upstream.id }).execute();
    const listener = new pg.Client({ connectionString: t.url });
    const holder = new pg.Client({ connectionString: t.url });
    await Promise.all([listener.connect(), holder.connect()]);
    try {
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query(`listen ${RUNS_FINISHED_CHANNEL}`);
      // As a poller evaluating the upstream would: its row locked until that transaction ends.
      await holder.query('begin');
      await holder.query('select id from workflows where id = $1 for update', [upstream.id]);
      const before = await evaluated('left_to_pollers');
      const res = await fail(downstream.name);
      expect(res.status).toBe(201);
      expect(await evaluated('left_to_pollers')).toBe(before + 1);
      expect(await runOf(res.body.id)).toMatchObject({ status: 'failed', processedAt: null });
      expect(await openAlertOf(downstream.id)).toBeUndefined();
      await eventually(() => heard.includes(String(res.body.id)));
      await holder.query('rollback');
      expect(await pollFinishedRuns(app.deps)).toBe(true);
      expect(await openAlertOf(downstream.id)).toMatchObject({ lastRunId: res.body.id });
    } finally {
      await Promise.all([listener.end(), holder.end()]);
    }
  });

  it('an evaluation that throws costs nothing of the report: it is recorded for the poller', async () => {
    const cursed = await workflow('cursed');
    const before = await evaluated('failed');
    const res = await fail(cursed.name);
    expect(res.status).toBe(201);
    expect(await evaluated('failed')).toBe(before + 1);
    expect(await runOf(res.body.id)).toMatchObject({ status: 'failed', error: 'warehouse unreachable', processedAt: null });
    expect(await openAlertOf(cursed.id)).toBeUndefined();
    // The report after it, for another workflow, is evaluated as usual.
    const fine = await workflow('fine');
    expect((await fail(fine.name)).status).toBe(201);
    expect(await openAlertOf(fine.id)).toBeDefined();
  });

  it('a burst beyond INLINE_EVALUATIONS at once is left to the pollers, who evaluate each run once', async () => {
    const burst = await Promise.all(Array.from({ length: INLINE_EVALUATIONS + 4 }, (_, i) => workflow(`burst${i}`)));
    const results = await Promise.all(burst.map((wf) => reportRun(app.deps, { tenant: 'acme', workflow: wf.name, status: 'failed', tick: new Date(TICK), error: 'warehouse unreachable' }, {})));
    const runs = await Promise.all(results.map((r) => (r.kind === 'created' ? runOf(r.run.id) : undefined)));
    expect(runs.every(Boolean)).toBe(true);
    // The first INLINE_EVALUATIONS began before any answered: evaluated with their reports; the rest wait for a poller.
    expect(runs.filter((r) => r!.processedAt !== null)).toHaveLength(INLINE_EVALUATIONS);
    while (await pollFinishedRuns(app.deps));
    const alerts = await t.db.selectFrom('alerts').select(['workflowId', 'lastRunId']).where('workflowId', 'in', burst.map((wf) => wf.id)).execute();
    expect(alerts.map((a) => a.lastRunId).sort((a, b) => a! - b!)).toEqual(runs.map((r) => r!.id).sort((a, b) => a - b));
  });
});
