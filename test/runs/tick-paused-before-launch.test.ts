import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { deleteTenant } from '../../src/services/tenants-api.js';
import { pauseWorkflow } from '../../src/services/workflow-state.js';
import { deleteWorkflow } from '../../src/services/workflows-api.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { stallingAfterFirstCommit, stallPoint } from '../helpers/stall-after-commit.js';

/**
 * A tick claimed and committed by the tick scheduler, then its workflow paused or disabled (or its tenant)
 * before the launch: the launch looks again in the statement that takes the run's lease, and a tick whose
 * workflow may no longer fire is not launched. It is recorded `skipped` with a note saying why (neither fired
 * nor missed, as a paused workflow's ticks are), never evaluated as a failure. The stall is a hook between the
 * claim's commit and the launches (test/helpers/stall-after-commit.ts), on a real database.
 */

const TICK = at('2026-03-10T02:00:00Z');

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const nightly = (tenantId: string, name: string): Promise<Workflow> =>
  makeWorkflow(t.db, { tenantId, name, source: 'api', cron: '0 2 * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), nextTickAt: TICK });

const runsOf = (workflowId: number) =>
  t.db.selectFrom('runs').select(['tick', 'status', 'leaseOwner', 'outcomeNote', 'processedAt']).where('workflowId', '=', workflowId).orderBy('id').execute();

/** Claims the due ticks on engine `e`, runs `between` after the claim committed, then lets the launches go. */
async function claimThen(e: Engine, between: () => Promise<unknown>): Promise<void> {
  const point = stallPoint();
  const firing = fireDueTicks({ ...e.deps, db: stallingAfterFirstCommit(e.deps.db, point.stall) });
  await point.reached;
  await between();
  point.release();
  await firing;
}

const launchedIds = (e: Engine) => e.launcher.launched.map((l) => l.workflow.id);

describe('a tick claimed before its workflow was paused or disabled', () => {
  it('paused, disabled, or its tenant disabled between the claim and the launch: not launched, recorded skipped saying why; an untouched one launches', async () => {
    await makeTenant(t.db, { id: 'acme', channel: 'CACME', source: 'api' });
    await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', source: 'api' });
    const paused = await nightly('acme', 'paused-after-claim');
    const disabled = await nightly('acme', 'disabled-after-claim');
    const gone = await nightly('globex', 'tenant-gone-after-claim');
    const untouched = await nightly('acme', 'untouched');
    const e = createEngine(t.db, TICK);

    await claimThen(e, async () => {
      // Every tick is committed `running`, leased to this replica, before any of them is launched.
      for (const wf of [paused, disabled, gone, untouched]) expect((await runsOf(wf.id)).map((r) => r.status)).toEqual(['running']);
      expect(await pauseWorkflow(e.deps, { workflowId: paused.id, scope: {}, actor: 'U0PAUSER', reason: 'vendor outage' })).toMatchObject({ kind: 'ok' });
      expect(await deleteWorkflow(e.deps, 'acme', disabled.name, {})).toEqual({ kind: 'deleted' });
      expect(await deleteTenant(e.deps, 'globex', 'admin')).toEqual({ kind: 'deleted' });
    });

    expect(launchedIds(e)).toEqual([untouched.id]);
    const skipped = (note: string) => [{ tick: TICK, status: 'skipped', leaseOwner: null, outcomeNote: note, processedAt: TICK }];
    expect(await runsOf(paused.id)).toEqual(skipped('not fired: the workflow was paused before its launch'));
    expect(await runsOf(disabled.id)).toEqual(skipped('not fired: the workflow was disabled before its launch'));
    expect(await runsOf(gone.id)).toEqual(skipped('not fired: its tenant was disabled before its launch'));
    expect((await runsOf(untouched.id)).map((r) => r.status)).toEqual(['succeeded']);

    // Nothing fires the tick again, and nothing of it is left for the pollers.
    await fireDueTicks(e.deps);
    await e.drain();
    for (const wf of [paused, disabled, gone]) expect(await runsOf(wf.id)).toHaveLength(1);
    expect(launchedIds(e)).toEqual([untouched.id]);
    expect(await t.db.selectFrom('alerts').select('id').where('workflowId', 'in', [paused.id, disabled.id, gone.id]).execute()).toEqual([]);
  });
});
