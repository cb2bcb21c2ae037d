import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { policySchema } from '../../src/config/workflows-file.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { recordingReplica } from './support.js';

/**
 * A managed tick falling due while a run of its workflow is still running
 * (a slow run, a retry that started late, a manual run): fired beside it and
 * said so (overlap: allow, the default), or not fired (overlap: skip).
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterAll(() => t.drop());

const hourly = (policy: object = {}) =>
  makeWorkflow(t.db, {
    cron: '0 * * * *',
    mode: 'managed',
    launcher: JSON.stringify({ kind: 'command', command: 'true' }),
    policy: JSON.stringify({ timeoutSeconds: 7200, ...policy }),
    nextTickAt: at('2026-03-10T02:00:00Z'),
  });

const tickRow = (workflowId: number, tick: string) =>
  t.db.selectFrom('runs').selectAll().where('workflowId', '=', workflowId).where('tick', '=', at(tick)).where('originalRunId', 'is', null).executeTakeFirstOrThrow();

describe('a tick falling due while a run of its workflow still runs', () => {
  it('overlap: allow (the default) fires it beside the run, and its row names the run it overlaps', async () => {
    const wf = await hourly();
    const slow = await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T01:00:00Z'), status: 'running', startedAt: at('2026-03-10T01:00:00Z'), finishedAt: null });
    const { deps, launched } = recordingReplica(t.db, new ManualClock('2026-03-10T02:00:00Z'));
    expect(await fireDueTicks(deps)).toBe(true);
    expect(launched.map((c) => c.tick?.toISOString())).toEqual(['2026-03-10T02:00:00.000Z']);
    const fired = await tickRow(wf.id, '2026-03-10T02:00:00Z');
    expect(fired).toMatchObject({ status: 'running', outcomeNote: `started while run ${slow.id} (tick 2026-03-10T01:00:00.000Z) was still running (overlap: allow)` });
  });

  it('overlap: skip does not fire it: the tick is recorded skipped, naming the run, and the next tick fires once that run is over', async () => {
    const wf = await hourly({ overlap: 'skip' });
    const original = await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T01:00:00Z'), status: 'pending_retry', finishedAt: at('2026-03-10T01:50:00Z') });
    // The tick of 01:00's third attempt started late and is still going at 02:00.
    const retry = await makeRun(t.db, {
      workflowId: wf.id,
      tick: at('2026-03-10T01:00:00Z'),
      trigger: 'retry',
      attempt: 3,
      originalRunId: original.id,
      status: 'running',
      startedAt: at('2026-03-10T01:55:00Z'),
      finishedAt: null,
    });
    const { deps, launched } = recordingReplica(t.db, new ManualClock('2026-03-10T02:00:00Z'));
    expect(await fireDueTicks(deps)).toBe(true);
    expect(launched).toEqual([]);
    const yielded = await tickRow(wf.id, '2026-03-10T02:00:00Z');
    expect(yielded).toMatchObject({
      status: 'skipped',
      error: null,
      startedAt: null,
      outcomeNote: `not fired: run ${retry.id} (tick 2026-03-10T01:00:00.000Z, attempt 3) was still running (overlap: skip)`,
    });
    // Neither a failure for the evaluator nor work for the poller.
    expect(yielded.processedAt).not.toBeNull();
    const moved = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(moved.nextTickAt?.toISOString()).toBe('2026-03-10T03:00:00.000Z');

    await t.db.updateTable('runs').set({ status: 'failed', finishedAt: at('2026-03-10T02:30:00Z') }).where('id', '=', retry.id).execute();
    const later = recordingReplica(t.db, new ManualClock('2026-03-10T03:00:00Z'));
    expect(await fireDueTicks(later.deps)).toBe(true);
    expect(later.launched.filter((c) => c.workflow.id === wf.id).map((c) => c.tick?.toISOString())).toEqual(['2026-03-10T03:00:00.000Z']);
    expect(await tickRow(wf.id, '2026-03-10T03:00:00Z')).toMatchObject({ status: 'running', outcomeNote: null });
  });

  it('a workflow with nothing running fires with no note, whatever its policy', async () => {
    const wf = await hourly({ overlap: 'skip' });
    await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T01:00:00Z'), status: 'succeeded' });
    const { deps, launched } = recordingReplica(t.db, new ManualClock('2026-03-10T02:00:00Z'));
    await fireDueTicks(deps);
    expect(launched.map((c) => c.workflow.id)).toContain(wf.id);
    expect(await tickRow(wf.id, '2026-03-10T02:00:00Z')).toMatchObject({ status: 'running', outcomeNote: null });
  });

  it('the workflows file takes allow or skip and names the field for anything else', () => {
    expect(policySchema.parse({ overlap: 'skip' })).toEqual({ overlap: 'skip' });
    const refused = policySchema.safeParse({ overlap: 'forbid' });
    expect(refused.success).toBe(false);
    expect(refused.error!.issues[0]).toMatchObject({ path: ['overlap'] });
    expect(refused.error!.issues[0]!.message).toMatch(/allow.*skip/);
  });
});
