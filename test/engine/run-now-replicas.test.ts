import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { finishRun } from '../../src/ledger/runs.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/** Run now and retries with two replicas on one database: one run per click, one attempt per failure. */

const START = new Date('2026-03-10T02:00:00Z');
let t: TestDatabase;
let pools: Db[] = [];
afterEach(async () => {
  for (const p of pools) await p.destroy();
  pools = [];
  await t?.drop();
});

async function twoReplicas(policy: Record<string, unknown> = {}): Promise<{ engines: Engine[]; wf: Workflow }> {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const wf = await makeWorkflow(t.db, {
    name: 'nightly',
    cron: '0 2 * * *',
    mode: 'managed',
    source: 'api',
    launcher: JSON.stringify({ kind: 'command', command: 'true' }),
    policy: JSON.stringify(policy),
  });
  const clock = new ManualClock(START);
  pools = [createDb(createPool(t.url, 4)), createDb(createPool(t.url, 4))];
  const engines = pools.map((db, i) => createEngine(db, START, {}, `replica-${i}`, clock));
  for (const e of engines) e.launcher.otherwise('hold');
  return { engines, wf };
}

/** Both replicas poll at once until neither finds anything. */
async function pollBoth(engines: Engine[]) {
  await Promise.all(
    engines.map(async (e) => {
      for (let idle = 0; idle < 3; ) idle = (await pollFinishedRunsDetailed(e.deps, 5)).length === 0 ? idle + 1 : 0;
    }),
  );
}

const launchedAttempts = (engines: Engine[]) => engines.flatMap((e) => e.launcher.launched.map((l) => l.attempt)).sort();

it('run now pressed on two replicas at once starts one run; the other is told it is already running', async () => {
  const { engines, wf } = await twoReplicas();
  const answers = await Promise.all(engines.map((e) => requestRunNow(e.deps, { workflowId: wf.id, actor: { user: 'U1' }, scope: { tenantId: 'acme' } })));
  expect(answers.map((a) => a.kind).sort()).toEqual(['already_running', 'started']);
  expect(await t.db.selectFrom('runs').select(['trigger', 'status']).execute()).toEqual([{ trigger: 'manual', status: 'running' }]);
  expect(launchedAttempts(engines)).toHaveLength(1);
});

it('a failed tick polled by two replicas at once gets one retry per failure, and its verdict once', async () => {
  const { engines, wf } = await twoReplicas({ retries: 2 });
  const original = await fireTick(engines[0]!, wf, START);
  await finishRun(engines[0]!.deps, original.id, { status: 'failed', error: 'connection reset' });
  await pollBoth(engines);
  const attempts = () => t.db.selectFrom('runs').select(['id', 'attempt', 'status']).where('originalRunId', '=', original.id).orderBy('id').execute();
  expect((await attempts()).map((a) => [a.attempt, a.status])).toEqual([[2, 'running']]);
  await finishRun(engines[1]!.deps, (await attempts())[0]!.id, { status: 'failed', error: 'connection reset' });
  await pollBoth(engines);
  expect((await attempts()).map((a) => [a.attempt, a.status])).toEqual([
    [2, 'failed'],
    [3, 'running'],
  ]);
  await finishRun(engines[0]!.deps, (await attempts())[1]!.id, { status: 'succeeded' });
  await pollBoth(engines);
  expect(launchedAttempts(engines)).toEqual([1, 2, 3]);
  expect(await t.db.selectFrom('runs').select(['status', 'outcomeNote']).where('id', '=', original.id).executeTakeFirstOrThrow()).toEqual({ status: 'succeeded', outcomeNote: 'recovered on attempt 3' });
});

it('a retry in flight when the policy is edited to fewer retries, or the workflow paused, gets no further attempt', async () => {
  const { engines, wf } = await twoReplicas({ retries: 3 });
  const original = await fireTick(engines[0]!, wf, START);
  await finishRun(engines[0]!.deps, original.id, { status: 'failed', error: 'boom' });
  await pollBoth(engines);
  const attempt2 = await t.db.selectFrom('runs').selectAll().where('originalRunId', '=', original.id).executeTakeFirstOrThrow();
  await t.db.updateTable('workflows').set({ policy: JSON.stringify({ retries: 1 }) }).where('id', '=', wf.id).execute();
  await finishRun(engines[1]!.deps, attempt2.id, { status: 'failed', error: 'boom' });
  await pollBoth(engines);
  expect(await t.db.selectFrom('runs').select(['status', 'outcomeNote']).where('id', '=', original.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', outcomeNote: 'failed on all 2 attempts' });

  // The next night: paused while its first retry runs.
  await t.db.updateTable('workflows').set({ policy: JSON.stringify({ retries: 3 }) }).where('id', '=', wf.id).execute();
  engines[0]!.clock.set(new Date('2026-03-11T02:00:00Z'));
  const fresh = await t.db.selectFrom('workflows').selectAll().where('id', '=', wf.id).executeTakeFirstOrThrow();
  const night2 = await fireTick(engines[0]!, fresh, new Date('2026-03-11T02:00:00Z'));
  await finishRun(engines[0]!.deps, night2.id, { status: 'failed', error: 'boom' });
  await pollBoth(engines);
  const retry = await t.db.selectFrom('runs').selectAll().where('originalRunId', '=', night2.id).executeTakeFirstOrThrow();
  await t.db.updateTable('workflows').set({ paused: true, pausedBy: 'U1', pausedAt: engines[0]!.clock.now() }).where('id', '=', wf.id).execute();
  await finishRun(engines[1]!.deps, retry.id, { status: 'failed', error: 'boom' });
  await pollBoth(engines);
  expect(await t.db.selectFrom('runs').select(['status', 'outcomeNote']).where('id', '=', night2.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', outcomeNote: 'failed on all 2 attempts' });
  expect(launchedAttempts(engines)).toEqual([1, 1, 2, 2]);
});
