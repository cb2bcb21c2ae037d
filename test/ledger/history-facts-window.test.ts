import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHistoryFacts } from '../../src/ledger/history-facts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, minutes, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';

/**
 * The recent tick outcomes (flapping, failing intermittently) of a workflow
 * with no open alert: read only while it is failing, and from where its
 * failure count starts (a resolve by hand, an upstream incident's end), not
 * from before it.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(() => t.drop());

const tick = (k: number) => new Date(T0.getTime() + k * minutes(5));

/** Ticks 0..n-1 alternating, tick 0 failed; `last` overrides the newest. */
async function alternating(workflowId: number, n: number) {
  for (let k = 0; k < n; k++) await makeRun(t.db, { workflowId, tick: tick(k), startedAt: tick(k), finishedAt: tick(k), processedAt: tick(k), status: k % 2 === 0 ? 'failed' : 'succeeded', ...(k % 2 === 0 ? { error: 'flaky' } : {}) });
}
const factsOf = async (id: number) => (await t.db.transaction().execute((trx) => loadHistoryFacts(trx, [id], []))).get(id)!;

describe('history facts: the recent outcomes of a workflow without an open alert', () => {
  it('are read while it is failing (the newest outcome a failure), newest first, at most ten', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'alternating' });
    await alternating(wf.id, 13);
    expect((await factsOf(wf.id)).recentOutcomes).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'failure' : 'success')));
    await makeRun(t.db, { workflowId: wf.id, tick: tick(13), startedAt: tick(13), finishedAt: tick(13), processedAt: tick(13), status: 'succeeded' });
    // Healthy now: nothing to decide, nothing read.
    expect((await factsOf(wf.id)).recentOutcomes).toEqual([]);
  });

  it('start after a resolve by hand', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'by-hand' });
    await alternating(wf.id, 13);
    await insertAlert(t.db, wf.id, { status: 'resolved', openedAt: tick(2), resolvedAt: new Date(tick(8).getTime() + 60_000), resolvedByRunId: null });
    expect((await factsOf(wf.id)).recentOutcomes).toEqual(['failure', 'success', 'failure', 'success']);
  });

  it('start after the end of an upstream incident that held it back', async () => {
    const up = await makeWorkflow(t.db, { tenantId: 'acme', name: 'upstream' });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'downstream' });
    await alternating(wf.id, 13);
    const upstream = await insertAlert(t.db, up.id, { status: 'resolved', openedAt: tick(0), resolvedAt: new Date(tick(6).getTime() + 60_000) });
    await t.db.insertInto('upstreamBlocks').values({ upstreamAlertId: upstream.id, workflowId: wf.id, since: tick(0), lastAt: tick(6), lastRunId: null }).execute();
    expect((await factsOf(wf.id)).recentOutcomes).toEqual(['failure', 'success', 'failure', 'success', 'failure', 'success']);
  });
});
