import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import type { NewRun, Workflow } from '../../src/db/schema.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * Workflow dependencies in the engine (issue 16): a downstream failure under
 * an open upstream alert opens nothing and is told in the upstream's thread;
 * the decision is made once with two replicas polling one stream.
 */
const NOW = new Date('2026-03-10T03:00:00Z');

let t: TestDatabase;
afterEach(async () => {
  await t?.drop();
});

const failed = (w: Workflow, tick: Date, error = `load ${w.name} failed`): NewRun =>
  newRunRow({ workflowId: w.id, tick, trigger: 'external', status: 'failed', attemptStatus: 'failed', attemptError: error, error, startedAt: tick, finishedAt: tick });

async function dependsOn(db: Db, downstream: Workflow, ...upstream: Workflow[]) {
  await db.insertInto('workflowDependencies').values(upstream.map((u) => ({ workflowId: downstream.id, upstreamId: u.id }))).execute();
}

const eventsOf = (db: Db, kind: string) => db.selectFrom('alertEvents').selectAll().where('kind', '=', kind).orderBy('id').execute();

describe('two replicas, one stream: an upstream failure and twenty downstream failures after it', () => {
  let pools: Db[] = [];
  beforeAll(() => {
    pools = [];
  });
  afterAll(async () => {
    for (const p of pools) await p.destroy();
  });

  it('open one alert, record each downstream failure once, and tell all twenty in the upstream thread', async () => {
    t = await createTestDatabase();
    await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
    const upstream = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 2 * * *' });
    const downstream: Workflow[] = [];
    for (let i = 0; i < 20; i++) {
      const w = await makeWorkflow(t.db, { name: `mart-${String(i).padStart(2, '0')}`, cron: '*/5 * * * *' });
      await dependsOn(t.db, w, upstream);
      downstream.push(w);
    }
    // The upstream's failure first, then three five-minute ticks of every downstream: enough to alert each three times over.
    const runs: NewRun[] = [failed(upstream, new Date('2026-03-10T02:00:00Z'))];
    for (let k = 1; k <= 3; k++) for (const w of downstream) runs.push(failed(w, new Date(Date.UTC(2026, 2, 10, 2, 5 * k))));
    await t.db.insertInto('runs').values(runs).execute();

    const clock = new ManualClock(NOW);
    pools = [createDb(createPool(t.url, 5)), createDb(createPool(t.url, 5))];
    const engines = pools.map((db, i) => createEngine(db, NOW, {}, `replica-${i}`, clock));
    const claimed: number[][] = [[], []];
    const work = async (e: Engine, into: number[]) => {
      for (let idle = 0; idle < 3; ) {
        const ids = await pollFinishedRunsDetailed(e.deps, 7);
        into.push(...ids);
        idle = ids.length === 0 ? idle + 1 : 0;
      }
    };
    await Promise.all(engines.map((e, i) => work(e, claimed[i]!)));
    expect(claimed[0]!.length + claimed[1]!.length).toBe(61);
    expect(claimed[0]!.length).toBeGreaterThan(0);
    expect(claimed[1]!.length).toBeGreaterThan(0);

    const alerts = await t.db.selectFrom('alerts').selectAll().execute();
    expect(alerts.map((a) => a.workflowId)).toEqual([upstream.id]);
    const blocks = await t.db.selectFrom('upstreamBlocks').selectAll().execute();
    expect(blocks).toHaveLength(20);
    expect(blocks.every((b) => b.upstreamAlertId === alerts[0]!.id && b.failures === 3 && b.missed === 0)).toBe(true);

    // Told as the list grew: the newest event names all twenty; each event once per channel, no key twice.
    const told = await eventsOf(t.db, 'upstream_affected');
    expect(told.length).toBeGreaterThanOrEqual(1);
    const names = (told.at(-1)!.data as { affected: { workflow: string }[] }).affected.map((a) => a.workflow).sort();
    expect(names).toEqual(downstream.map((w) => w.name));
    const sizes = told.map((e) => (e.data as { affected: unknown[] }).affected.length);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(new Set(sizes).size).toBe(sizes.length);
    const rows = await t.db.selectFrom('notifications').select(['eventId', 'destination', 'idempotencyKey']).where('eventId', 'in', told.map((e) => e.id)).execute();
    expect(rows).toHaveLength(told.length * 2);
    expect(new Set(rows.map((r) => r.idempotencyKey)).size).toBe(rows.length);
  });
});

describe('one engine', () => {
  let engine: Engine;
  const setup = async () => {
    t = await createTestDatabase();
    await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
    engine = createEngine(t.db, NOW);
  };
  const report = async (w: Workflow, iso: string) => {
    await reportRun(t.db, w, new Date(iso), { status: 'failed', error: `${w.name} failed` }, engine.clock.now());
    await engine.drain();
  };

  it('a → b → c: c failing while a is down is held back by a, even though b has not failed', async () => {
    await setup();
    const a = await makeWorkflow(t.db, { name: 'a', cron: '0 2 * * *' });
    const b = await makeWorkflow(t.db, { name: 'b', cron: '0 3 * * *' });
    const c = await makeWorkflow(t.db, { name: 'c', cron: '0 * * * *', policy: { alertAfter: 1 } });
    await dependsOn(t.db, b, a);
    await dependsOn(t.db, c, b);
    await report(a, '2026-03-10T02:00:00Z');
    await report(c, '2026-03-10T02:00:00Z');
    const alerts = await t.db.selectFrom('alerts').select(['id', 'workflowId']).execute();
    expect(alerts.map((x) => x.workflowId)).toEqual([a.id]);
    const blocks = await t.db.selectFrom('upstreamBlocks').select(['upstreamAlertId', 'workflowId']).execute();
    expect(blocks).toEqual([{ upstreamAlertId: alerts[0]!.id, workflowId: c.id }]);
  });

  it('a downstream alert already open when the upstream breaks stays open, linked, and is told so once', async () => {
    await setup();
    const up = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 2 * * *' });
    const down = await makeWorkflow(t.db, { name: 'orders-mart', cron: '0 * * * *', policy: { alertAfter: 1 } });
    await dependsOn(t.db, down, up);
    await report(down, '2026-03-10T01:00:00Z');
    await report(up, '2026-03-10T02:00:00Z');
    const alerts = await t.db.selectFrom('alerts').selectAll().orderBy('id').execute();
    expect(alerts.map((x) => [x.workflowId, x.status, x.upstreamAlertId])).toEqual([
      [down.id, 'open', alerts[1]!.id],
      [up.id, 'open', null],
    ]);
    const broke = await eventsOf(t.db, 'upstream_broke');
    expect(broke.map((e) => [e.alertId, e.data])).toEqual([[alerts[0]!.id, { upstreamAlertId: alerts[1]!.id, upstreamWorkflow: 'warehouse-load' }]]);
    // Its next failure counts on its own alert as before; nothing is held back into the upstream's thread.
    await report(down, '2026-03-10T02:00:00Z');
    expect(await t.db.selectFrom('upstreamBlocks').selectAll().execute()).toEqual([]);
    const own = await t.db.selectFrom('alerts').select('consecutiveFailures').where('id', '=', alerts[0]!.id).executeTakeFirstOrThrow();
    expect(own.consecutiveFailures).toBe(2);
  });

  it('a shadow upstream incident holds no live downstream back: the live failure opens its own alert in its channel, unlinked', async () => {
    await setup();
    const up = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 2 * * *', shadow: true });
    const down = await makeWorkflow(t.db, { name: 'orders-mart', cron: '0 * * * *', policy: { alertAfter: 1 } });
    const open = await makeWorkflow(t.db, { name: 'billing-mart', cron: '0 * * * *', policy: { alertAfter: 1 } });
    await dependsOn(t.db, down, up);
    await dependsOn(t.db, open, up);
    await report(open, '2026-03-10T01:00:00Z');
    await report(up, '2026-03-10T02:00:00Z');
    await report(down, '2026-03-10T02:00:00Z');
    expect(await t.db.selectFrom('upstreamBlocks').selectAll().execute()).toEqual([]);
    const alerts = await t.db.selectFrom('alerts').select(['workflowId', 'upstreamAlertId']).orderBy('id').execute();
    expect(alerts).toEqual([
      { workflowId: open.id, upstreamAlertId: null },
      { workflowId: up.id, upstreamAlertId: null },
      { workflowId: down.id, upstreamAlertId: null },
    ]);
    expect(await eventsOf(t.db, 'upstream_broke')).toEqual([]);
    expect(await eventsOf(t.db, 'upstream_affected')).toEqual([]);
  });

  it('a shadow downstream is not listed in a live upstream thread: it opens its own shadow alert, told on the platform channel only', async () => {
    await setup();
    const up = await makeWorkflow(t.db, { name: 'warehouse-load', cron: '0 2 * * *' });
    const down = await makeWorkflow(t.db, { name: 'orders-mart', cron: '0 * * * *', policy: { alertAfter: 1 }, shadow: true });
    await dependsOn(t.db, down, up);
    await report(up, '2026-03-10T02:00:00Z');
    await report(down, '2026-03-10T02:00:00Z');
    expect(await t.db.selectFrom('upstreamBlocks').selectAll().execute()).toEqual([]);
    expect(await eventsOf(t.db, 'upstream_affected')).toEqual([]);
    const own = await t.db.selectFrom('alerts').select('id').where('workflowId', '=', down.id).executeTakeFirstOrThrow();
    const heard = await t.db.selectFrom('notifications').select('destination').distinct().where('alertId', '=', own.id).execute();
    expect(heard.map((h) => h.destination)).toEqual(['slack:CPLATFORM']);
  });
});
