import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Workflow } from '../../src/db/schema.js';
import { checkRunDurations } from '../../src/engine/run-duration.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { finishRun, newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * An alert opened by a cause (running long, a missed completion deadline) on
 * a healthy workflow, with `recoverAfter` 2: the successes from before the
 * cause say nothing about it, so it resolves only after two successes of its
 * own (the long run's success is the first), never on the first one.
 */

let t: TestDatabase;
let engine: Engine;
const clock = new ManualClock(at('2026-03-01T00:00:00Z'));

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  engine = createEngine(t.db, clock.now(), {}, 'engine-a', clock);
});
afterAll(async () => t.drop());

async function succeeded(workflow: Workflow, tick: Date, seconds = 60) {
  const end = new Date(tick.getTime() + seconds * 1000);
  await t.db.insertInto('runs').values(newRunRow({ workflowId: workflow.id, tick, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: tick, finishedAt: end, durationSeconds: seconds, processedAt: end })).execute();
}

async function running(workflow: Workflow, tick: Date, timeoutSeconds: number) {
  return t.db
    .insertInto('runs')
    .values(newRunRow({ workflowId: workflow.id, tick, trigger: 'schedule', status: 'running', startedAt: tick, deadlineAt: new Date(tick.getTime() + timeoutSeconds * 1000) }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A run that started at its tick succeeds now, and the poller evaluates it. */
async function ends(runId: number, now: Date) {
  clock.set(now);
  await finishRun(engine.deps, runId, { status: 'succeeded' });
  await pollFinishedRuns(engine.deps);
}

async function story(workflow: Workflow) {
  const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', workflow.id).executeTakeFirstOrThrow();
  const events = await t.db.selectFrom('alertEvents').select(['kind', 'data']).where('alertId', '=', alert.id).orderBy('id').execute();
  return { alert, kinds: events.map((e) => e.kind), events };
}

describe('recoverAfter > 1 on an alert opened by a cause', () => {
  it('running long: the long run succeeding is one success of two; the next tick resolves', async () => {
    const wf = await makeWorkflow(t.db, { name: 'hourly-long', cron: '0 * * * *', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ retries: 0, recoverAfter: 2, runningLongAfterSeconds: 600 }) });
    for (const hh of ['00', '01']) await succeeded(wf, at(`2026-03-10T${hh}:00:00Z`));
    const long = await running(wf, at('2026-03-10T02:00:00Z'), 54 * 60);
    clock.set(at('2026-03-10T02:10:00Z'));
    await checkRunDurations(engine.deps);
    expect((await story(wf)).kinds).toEqual(['opened']);

    await ends(long.id, at('2026-03-10T02:30:00Z'));
    let s = await story(wf);
    expect(s.alert.status).toBe('open');
    expect(s.kinds).toEqual(['opened', 'healthy_streak']);
    expect(s.events[1]!.data).toMatchObject({ streak: 1, of: 2 });

    const next = await running(wf, at('2026-03-10T03:00:00Z'), 54 * 60);
    await ends(next.id, at('2026-03-10T03:01:00Z'));
    s = await story(wf);
    expect(s.kinds).toEqual(['opened', 'healthy_streak', 'resolved']);
    expect(s.events[2]!.data).toMatchObject({ runId: next.id, successes: 2, recoverAfter: 2 });
  });

  it('a missed completion deadline: the late success is one of two; the next night resolves', async () => {
    const wf = await makeWorkflow(t.db, { name: 'nightly-late', cron: '0 2 * * *', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ recoverAfter: 2, completeBy: { time: '04:00' } }) });
    for (const d of ['07', '08', '09']) await succeeded(wf, at(`2026-03-${d}T02:00:00Z`));
    const late = await running(wf, at('2026-03-10T02:00:00Z'), 6 * 3600);
    clock.set(at('2026-03-10T04:00:00Z'));
    await checkRunDurations(engine.deps);
    expect((await story(wf)).alert).toMatchObject({ status: 'open', cause: 'completion_missed' });

    await ends(late.id, at('2026-03-10T04:30:00Z'));
    expect((await story(wf)).alert.status).toBe('open');

    const next = await running(wf, at('2026-03-11T02:00:00Z'), 6 * 3600);
    await ends(next.id, at('2026-03-11T02:20:00Z'));
    const s = await story(wf);
    expect(s.alert.status).toBe('resolved');
    expect(s.alert.resolvedByRunId).toBe(next.id);
  });
});
