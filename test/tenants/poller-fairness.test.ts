import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewRun, Workflow } from '../../src/db/schema.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * Tenant A's storm (500 finished runs waiting, its 100 workflows failing at
 * once) must not hold back tenant B's one failure: the poller's claim takes
 * the tenants' runs in turn, so B's run is in the first batch, not behind
 * A's whole backlog.
 */
const NOW = new Date('2026-03-31T00:00:00Z');

let t: TestDatabase;
let engine: Engine;
let storming: Workflow[] = [];
let quiet: Workflow;
let quietRunId: number;
let stormRunIds: number[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'storm', name: 'Storm', channel: 'CSTORM' });
  await makeTenant(t.db, { id: 'quiet', name: 'Quiet', channel: 'CQUIET' });
  for (let i = 0; i < 100; i++) storming.push(await makeWorkflow(t.db, { tenantId: 'storm', name: `load-${i}`, cron: '*/5 * * * *' }));
  quiet = await makeWorkflow(t.db, { tenantId: 'quiet', name: 'load-0', cron: '*/5 * * * *' });
  const failed = (w: Workflow, tick: Date): NewRun =>
    newRunRow({ workflowId: w.id, tick, trigger: 'external', status: 'failed', attemptStatus: 'failed', attemptError: 'boom', error: 'boom', startedAt: tick, finishedAt: tick });
  const runs: NewRun[] = [];
  for (let k = 5; k >= 1; k--) for (const w of storming) runs.push(failed(w, new Date(NOW.getTime() - k * 300_000)));
  stormRunIds = (await t.db.insertInto('runs').values(runs).returning('id').execute()).map((r) => r.id);
  // B's failure arrives last, behind all 500 of A's.
  quietRunId = (await t.db.insertInto('runs').values(failed(quiet, new Date(NOW.getTime() - 300_000))).returning('id').executeTakeFirstOrThrow()).id;
  engine = createEngine(t.db, NOW);
});
afterAll(async () => {
  await t.drop();
});

describe('the poller under one tenant\'s storm', () => {
  it('claims the quiet tenant\'s run in its first batch, and each workflow\'s runs still in the order they arrived', async () => {
    expect(stormRunIds).toHaveLength(500);
    const first = await pollFinishedRunsDetailed(engine.deps, 50);
    expect(first).toHaveLength(50);
    expect(first).toContain(quietRunId);
    const batches = [first];
    for (;;) {
      const ids = await pollFinishedRunsDetailed(engine.deps, 50);
      if (ids.length === 0) break;
      batches.push(ids);
    }
    const all = batches.flat();
    expect(all.sort((a, b) => a - b)).toEqual([...stormRunIds, quietRunId].sort((a, b) => a - b));
    // Each workflow's runs were evaluated oldest first: five failures in a row, counted in order.
    const alerts = await t.db.selectFrom('alerts').select(['workflowId', 'consecutiveFailures']).where('workflowId', 'in', storming.map((w) => w.id)).execute();
    expect(alerts).toHaveLength(100);
    expect(alerts.every((a) => a.consecutiveFailures === 5)).toBe(true);
  });
});
