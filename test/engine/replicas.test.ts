import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import type { NewRun, Workflow } from '../../src/db/schema.js';
import { isNotifiedKind, QUIET_EVENT_KINDS } from '../../src/domain/events.js';
import { escalateDueWarnings } from '../../src/engine/escalation.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * Two engines, each with its own connection pool (as two replicas would
 * have), work one stream of 1,000 finished runs at once, retries included.
 */
const NOW = new Date('2026-03-31T00:00:00Z');
const TICKS = 20;

let t: TestDatabase;
let pools: Db[] = [];
let engines: Engine[] = [];
const failing: Workflow[] = [];
const healthy: Workflow[] = [];
const retrying: Workflow[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const launcher = JSON.stringify({ kind: 'command', command: 'false' });
  for (let i = 0; i < 20; i++) failing.push(await makeWorkflow(t.db, { name: `failing-${i}`, cron: '*/5 * * * *' }));
  for (let i = 0; i < 20; i++) healthy.push(await makeWorkflow(t.db, { name: `healthy-${i}`, cron: '*/5 * * * *' }));
  for (let i = 0; i < 10; i++) retrying.push(await makeWorkflow(t.db, { name: `nightly-${i}`, cron: '0 2 * * *', mode: 'managed', launcher }));

  const runs: NewRun[] = [];
  const row = (w: Workflow, tick: Date, ok: boolean): NewRun =>
    newRunRow({
      workflowId: w.id,
      tick,
      trigger: w.mode === 'managed' ? 'schedule' : 'external',
      status: ok ? 'succeeded' : 'failed',
      attemptStatus: ok ? 'succeeded' : 'failed',
      attemptError: ok ? null : `load ${w.name} failed`,
      error: ok ? null : `load ${w.name} failed`,
      startedAt: tick,
      finishedAt: tick,
    });
  // Interleaved by time, as they would arrive.
  for (let k = TICKS; k >= 1; k--) {
    const fiveMin = new Date(NOW.getTime() - k * 300_000);
    const daily = new Date(Date.UTC(2026, 2, 31 - k, 2));
    for (const w of failing) runs.push(row(w, fiveMin, false));
    for (const w of healthy) runs.push(row(w, fiveMin, true));
    for (const w of retrying) runs.push(row(w, daily, false));
  }
  expect(runs).toHaveLength(1000);
  await t.db.insertInto('runs').values(runs).execute();

  const clock = new ManualClock(NOW);
  pools = [createDb(createPool(t.url, 5)), createDb(createPool(t.url, 5))];
  // Every retry fails too (the scripted fallback), so each nightly tick takes four attempts.
  engines = pools.map((db, i) => createEngine(db, NOW, {}, `replica-${i}`, clock));
  for (const e of engines) e.launcher.otherwise({ status: 'failed', error: 'still failing' });
});
afterAll(async () => {
  for (const p of pools) await p.destroy();
  await t.drop();
});

async function work(engine: Engine, claimed: number[]) {
  let idle = 0;
  // Both replicas keep polling until neither has found anything for a few rounds (retries land after commits).
  while (idle < 3) {
    const ids = await pollFinishedRunsDetailed(engine.deps, 25);
    claimed.push(...ids);
    idle = ids.length === 0 ? idle + 1 : 0;
  }
}

describe('two engines on one database', () => {
  it('evaluate every run exactly once and write every notification exactly once', async () => {
    const claimed: number[][] = [[], []];
    await Promise.all(engines.map((e, i) => work(e, claimed[i]!)));
    await Promise.all(engines.map((e, i) => work(e, claimed[i]!)));

    const all = [...claimed[0]!, ...claimed[1]!];
    const total = await t.db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(total.n).toBe(1000 + 10 * TICKS * 3);
    expect(all).toHaveLength(total.n);
    expect(new Set(all).size).toBe(total.n);
    // Both actually worked.
    expect(claimed[0]!.length).toBeGreaterThan(0);
    expect(claimed[1]!.length).toBeGreaterThan(0);
    expect(await t.db.selectFrom('runs').select('id').where('processedAt', 'is', null).execute()).toEqual([]);

    // Every nightly tick: four attempts, the original carries the verdict.
    const originals = await t.db.selectFrom('runs').selectAll().where('workflowId', 'in', retrying.map((w) => w.id)).where('originalRunId', 'is', null).execute();
    expect(originals.every((r) => r.status === 'failed' && r.outcomeNote === 'failed on all 4 attempts')).toBe(true);

    // The escalation clock on both replicas at once: each warning escalates once.
    await Promise.all(engines.map((e) => escalateDueWarnings(e.deps, NOW)));

    const alerts = await t.db.selectFrom('alerts').selectAll().execute();
    expect(alerts).toHaveLength(30);
    expect(new Set(alerts.map((a) => a.workflowId)).size).toBe(30);
    const failingIds = new Set([...failing, ...retrying].map((w) => w.id));
    expect(alerts.every((a) => failingIds.has(a.workflowId) && a.status === 'open' && a.consecutiveFailures === TICKS)).toBe(true);
    expect(alerts.every((a) => a.severity === 'critical')).toBe(true);

    const events = await t.db.selectFrom('alertEvents').selectAll().execute();
    const count = (kind: string) => events.filter((e) => e.kind === kind).length;
    expect(count('opened')).toBe(30);
    expect(count('escalated')).toBe(20);

    // Exactly one row per (event, destination) for every event a person hears about or the root re-renders for.
    const rows = await t.db.selectFrom('notifications').select(['eventId', 'destination', 'idempotencyKey']).execute();
    expect(new Set(rows.map((r) => r.idempotencyKey)).size).toBe(rows.length);
    const told = events.filter((e) => isNotifiedKind(e.kind) || (QUIET_EVENT_KINDS as readonly string[]).includes(e.kind));
    expect(rows).toHaveLength(told.length * 2);
    for (const e of told) {
      expect(rows.filter((r) => r.eventId === e.id).map((r) => r.destination).sort()).toEqual(['slack:CACME', 'slack:CPLATFORM']);
    }
  });
});
