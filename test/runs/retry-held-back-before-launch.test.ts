import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { deleteTenant } from '../../src/services/tenants-api.js';
import { pauseWorkflow } from '../../src/services/workflow-state.js';
import { deleteWorkflow } from '../../src/services/workflows-api.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { stallingAfterFirstCommit, stallPoint } from '../helpers/stall-after-commit.js';

/**
 * A retry the poller's batch committed, then its workflow paused or disabled (or its tenant) before the launch:
 * the launch looks again in the statement that takes the run's lease, like a tick's (launchRun, held-back-launch.ts).
 * The retry is not launched, its row is recorded `skipped` saying why, and its tick's verdict is the attempt before
 * it, as when the pause had come before the verdict. A Run now is a person's one-off: a pause after the click still
 * runs it, a disable holds it back. The stall is a hook between the commit and the launch, on a real database.
 */

const TICK = at('2026-03-10T03:00:00Z');
const ERROR = 'relation "orders" refresh failed: connection reset';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME', source: 'api' });
});
afterAll(async () => {
  await t.drop();
});

let n = 0;
/** An hourly managed workflow (2 retries a tick) of `tenantId`. */
const hourly = (tenantId = 'acme'): Promise<Workflow> =>
  makeWorkflow(t.db, { tenantId, name: `hourly-${++n}`, source: 'api', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: TICK });

const runsOf = (workflowId: number) =>
  t.db.selectFrom('runs').select(['attempt', 'trigger', 'status', 'error', 'outcomeNote', 'leaseOwner', 'processedAt']).where('workflowId', '=', workflowId).orderBy('id').execute();

/** The first `failed` attempts of `wf` fail; the poller's batch commits the next, `between` runs, then the batch's launches go. */
async function retryThen(e: Engine, wf: Workflow, between: () => Promise<unknown>, failed = 1): Promise<void> {
  for (let i = 1; i <= failed; i++) e.launcher.script(wf.id, { status: 'failed', error: `${ERROR} (attempt ${i})` });
  await fireTick(e, wf, TICK);
  await e.launcher.finishDue();
  for (let i = 2; i <= failed; i++) {
    await pollFinishedRuns(e.deps);
    await e.launcher.finishDue();
  }
  const point = stallPoint();
  const polling = pollFinishedRuns({ ...e.deps, db: stallingAfterFirstCommit(e.deps.db, point.stall) });
  await point.reached;
  expect((await runsOf(wf.id)).map((r) => r.status)).toEqual(['pending_retry', ...Array(failed - 1).fill('failed'), 'running']);
  await between();
  point.release();
  await polling;
  await e.drain();
}

const launchedIds = (e: Engine) => e.launcher.launched.map((l) => [l.workflow.id, l.attempt]);

describe('a retry committed before its workflow was paused or disabled', () => {
  it('paused between the verdict and the launch: not launched, recorded skipped; the tick failed on attempt 1, saying why', async () => {
    const wf = await hourly();
    const e = createEngine(t.db, TICK);
    await retryThen(e, wf, () => pauseWorkflow(e.deps, { workflowId: wf.id, scope: {}, actor: 'U0PAUSER', reason: 'vendor outage' }));
    expect(launchedIds(e)).toEqual([[wf.id, 1]]);
    expect(await runsOf(wf.id)).toEqual([
      { attempt: 1, trigger: 'schedule', status: 'failed', error: `${ERROR} (attempt 1)`, outcomeNote: "failed on attempt 1; not retried (the workflow was paused before its retry's launch)", leaseOwner: null, processedAt: TICK },
      { attempt: 2, trigger: 'retry', status: 'skipped', error: null, outcomeNote: "not launched: the workflow was paused before this retry's launch", leaseOwner: null, processedAt: TICK },
    ]);
  });

  it("held back at attempt 3: the tick's verdict is attempt 2's failure", async () => {
    const wf = await hourly();
    const e = createEngine(t.db, TICK);
    await retryThen(e, wf, () => pauseWorkflow(e.deps, { workflowId: wf.id, scope: {}, actor: 'U0PAUSER', reason: 'vendor outage' }), 2);
    expect(launchedIds(e)).toEqual([[wf.id, 1], [wf.id, 2]]);
    expect((await runsOf(wf.id)).map((r) => [r.attempt, r.status, r.error, r.outcomeNote])).toEqual([
      [1, 'failed', `${ERROR} (attempt 2)`, "failed on attempt 2; not retried (the workflow was paused before its retry's launch)"],
      [2, 'failed', `${ERROR} (attempt 2)`, null],
      [3, 'skipped', null, "not launched: the workflow was paused before this retry's launch"],
    ]);
  });

  it('the workflow disabled, or its tenant: not launched either, saying which', async () => {
    const disabled = await hourly();
    const e = createEngine(t.db, TICK);
    await retryThen(e, disabled, () => deleteWorkflow(e.deps, 'acme', disabled.name, {}));
    expect((await runsOf(disabled.id)).map((r) => [r.status, r.outcomeNote])).toEqual([
      ['failed', "failed on attempt 1; not retried (the workflow was disabled before its retry's launch)"],
      ['skipped', "not launched: the workflow was disabled before this retry's launch"],
    ]);
    await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', source: 'api' });
    const gone = await hourly('globex');
    await retryThen(e, gone, () => deleteTenant(e.deps, 'globex', 'admin'));
    expect((await runsOf(gone.id)).map((r) => [r.status, r.outcomeNote])).toEqual([
      ['failed', "failed on attempt 1; not retried (its tenant was disabled before its retry's launch)"],
      ['skipped', "not launched: its tenant was disabled before this retry's launch"],
    ]);
    expect(launchedIds(e)).toEqual([[disabled.id, 1], [gone.id, 1]]);
  });

  it('untouched: the retry launches as usual', async () => {
    const wf = await hourly();
    const e = createEngine(t.db, TICK);
    await retryThen(e, wf, async () => {});
    expect(launchedIds(e)).toEqual([[wf.id, 1], [wf.id, 2]]);
  });
});

describe('a Run now between its click and its launch', () => {
  /** Run now on `wf`, `between` run after its transaction committed and before its launch. */
  async function runNowThen(e: Engine, wf: Workflow, between: () => Promise<unknown>) {
    const point = stallPoint();
    const asking = requestRunNow({ ...e.deps, db: stallingAfterFirstCommit(e.deps.db, point.stall) }, { workflowId: wf.id, actor: { user: 'U0ASKER' }, scope: {} });
    await point.reached;
    await between();
    point.release();
    return asking;
  }

  it('paused after the click: still the one-off a person asked for, launched', async () => {
    const wf = await hourly();
    const e = createEngine(t.db, TICK);
    e.launcher.script(wf.id, 'hold');
    const result = await runNowThen(e, wf, () => pauseWorkflow(e.deps, { workflowId: wf.id, scope: {}, actor: 'U0PAUSER', reason: 'vendor outage' }));
    expect(result).toMatchObject({ kind: 'started' });
    expect(launchedIds(e)).toEqual([[wf.id, 1]]);
  });

  it('the workflow disabled after the click: not launched, recorded skipped saying why, answered as not found', async () => {
    const wf = await hourly();
    const e = createEngine(t.db, TICK);
    const result = await runNowThen(e, wf, () => deleteWorkflow(e.deps, 'acme', wf.name, {}));
    expect(result).toEqual({ kind: 'not_found' });
    expect(launchedIds(e)).toEqual([]);
    expect(await runsOf(wf.id)).toEqual([
      { attempt: 1, trigger: 'manual', status: 'skipped', error: null, outcomeNote: 'not run: the workflow was disabled before its launch', leaseOwner: null, processedAt: TICK },
    ]);
  });
});
