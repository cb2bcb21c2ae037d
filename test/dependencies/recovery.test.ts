import { afterEach, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import type { Db } from '../../src/db/connect.js';
import { deleteWorkflow } from '../../src/services/workflows-api.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/** One root cause told once: a diamond of dependencies, the upstream recovering, the upstream deleted, through the real engine. */

let t: TestDatabase;
let engine: Engine;
afterEach(async () => {
  await t?.drop();
});

async function setup() {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  engine = createEngine(t.db, '2026-03-10T01:59:00Z');
}

async function dependsOn(db: Db, downstream: Workflow, ...upstream: Workflow[]) {
  await db.insertInto('workflowDependencies').values(upstream.map((u) => ({ workflowId: downstream.id, upstreamId: u.id }))).execute();
}

/** The clock moves to the tick's minute, the run is reported there and the engine settles. */
async function report(w: Workflow, iso: string, status: 'failed' | 'succeeded' = 'failed') {
  engine.clock.set(new Date(iso));
  await reportRun(t.db, w, new Date(iso), { status, ...(status === 'failed' ? { error: `${w.name} failed` } : {}) }, engine.clock.now());
  await engine.drain();
}

const alertsOf = () => t.db.selectFrom('alerts').select(['id', 'workflowId', 'status', 'upstreamAlertId']).orderBy('id').execute();
const eventsOf = (kind: string) => t.db.selectFrom('alertEvents').selectAll().where('kind', '=', kind).orderBy('id').execute();

it('a diamond (a → b, a → c, b → d, c → d): one alert, d listed once, its failures counted once each', async () => {
  await setup();
  const a = await makeWorkflow(t.db, { name: 'a', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const b = await makeWorkflow(t.db, { name: 'b', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const c = await makeWorkflow(t.db, { name: 'c', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const d = await makeWorkflow(t.db, { name: 'd', cron: '0 * * * *', policy: { alertAfter: 1 } });
  await dependsOn(t.db, b, a);
  await dependsOn(t.db, c, a);
  await dependsOn(t.db, d, b, c);
  await report(a, '2026-03-10T02:00:00Z');
  for (const w of [b, c, d]) await report(w, '2026-03-10T02:00:00Z');
  await report(d, '2026-03-10T03:00:00Z');
  const alerts = await alertsOf();
  expect(alerts.map((x) => x.workflowId)).toEqual([a.id]);
  const blocks = await t.db.selectFrom('upstreamBlocks').select(['workflowId', 'failures', 'upstreamAlertId']).orderBy('workflowId').execute();
  expect(blocks).toEqual([b, c, d].map((w) => ({ workflowId: w.id, failures: w === d ? 2 : 1, upstreamAlertId: alerts[0]!.id })));
  // The list is told as it grows (counts as of the last workflow added; the running count is d's block above).
  const told = await eventsOf('upstream_affected');
  expect(told.map((e) => (e.data as { affected: { workflow: string }[] }).affected.map((x) => x.workflow).sort())).toEqual([['b'], ['b', 'c'], ['b', 'c', 'd']]);
});

it('after the upstream recovers, the downstream counts from the recovery and, still failing, opens its own alert saying it outlived the upstream', async () => {
  await setup();
  const up = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 * * * *', policy: { alertAfter: 1 } });
  const down = await makeWorkflow(t.db, { name: 'orders-mart', cron: '30 * * * *', policy: { alertAfter: 2 } });
  await dependsOn(t.db, down, up);
  await report(up, '2026-03-10T02:00:00Z');
  await report(down, '2026-03-10T02:30:00Z');
  await report(down, '2026-03-10T03:30:00Z');
  await report(up, '2026-03-10T04:00:00Z', 'succeeded');
  const upAlert = (await alertsOf())[0]!;
  expect(upAlert).toMatchObject({ workflowId: up.id, status: 'resolved' });
  // Two failures held back before the recovery do not count: one after it is not yet its threshold.
  await report(down, '2026-03-10T04:30:00Z');
  expect((await alertsOf()).filter((x) => x.workflowId === down.id)).toEqual([]);
  await report(down, '2026-03-10T05:30:00Z');
  const own = (await alertsOf()).filter((x) => x.workflowId === down.id);
  expect(own).toEqual([expect.objectContaining({ status: 'open', upstreamAlertId: upAlert.id })]);
  const outlived = await eventsOf('outlived_upstream');
  expect(outlived.map((e) => e.alertId)).toEqual([own[0]!.id]);
});

it('the upstream deleted while it holds a downstream back: its alert resolves, and the downstream is judged on its own from then on', async () => {
  await setup();
  const up = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 * * * *', policy: { alertAfter: 1 }, source: 'api' });
  const down = await makeWorkflow(t.db, { name: 'orders-mart', cron: '30 * * * *', policy: { alertAfter: 1 } });
  await dependsOn(t.db, down, up);
  await report(up, '2026-03-10T02:00:00Z');
  await report(down, '2026-03-10T02:30:00Z');
  expect((await alertsOf()).map((x) => x.workflowId)).toEqual([up.id]);
  engine.clock.set(new Date('2026-03-10T02:45:00Z'));
  expect(await deleteWorkflow(engine.deps, 'acme', 'warehouse-load', {}, 'admin')).toEqual({ kind: 'deleted' });
  await report(down, '2026-03-10T03:30:00Z');
  const alerts = await alertsOf();
  expect(alerts.map((x) => [x.workflowId, x.status])).toEqual([
    [up.id, 'resolved'],
    [down.id, 'open'],
  ]);
  expect(await t.db.selectFrom('upstreamBlocks').select('workflowId').execute()).toEqual([{ workflowId: down.id }]);
  // Its thread is not told the upstream recovered: it was deleted.
  const outlived = await eventsOf('outlived_upstream');
  expect(outlived.map((e) => [e.alertId, e.data])).toEqual([
    [alerts[1]!.id, { upstreamAlertId: alerts[0]!.id, upstreamWorkflow: 'warehouse-load', upstreamResolvedAt: '2026-03-10T02:45:00.000Z', upstreamEndedBy: 'workflow_deleted' }],
  ]);
});
