import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, notificationStory, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

/** seeds/001's four sequences, on an hourly observed workflow reporting its ticks (alert after 2 confirmed failures). */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;
let n = 0;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db);
  wf = await makeWorkflow(t.db, { name: 'hourly-import', cron: '0 * * * *', policy: JSON.stringify({ recoverAfter: 2 }) });
  n = 0;
});
afterEach(async () => t.drop());

async function tick(status: 'succeeded' | 'failed', error = 'ERROR: duplicate key value violates unique constraint "orders_pkey" (id=4711)') {
  n++;
  engine.clock.set(new Date(hour(n).getTime() + minutes(2)));
  await reportRun(t.db, wf, hour(n), status === 'failed' ? { status, error } : { status }, engine.clock.now());
  await engine.drain();
}

const alerts = () => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const kinds = async (alertId: number) => (await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', alertId).orderBy('id').execute()).map((e) => e.kind);

describe('the four sequences', () => {
  it('repeated failure: one alert whose count grows, not one per failure', async () => {
    await tick('failed');
    expect(await alerts()).toHaveLength(0);
    await tick('failed');
    await tick('failed');
    await tick('failed', 'ERROR: duplicate key value violates unique constraint "orders_pkey" (id=9000)');
    const [alert, ...rest] = await alerts();
    expect(rest).toHaveLength(0);
    expect(alert).toMatchObject({ status: 'open', severity: 'warning', consecutiveFailures: 4, errorGroupCount: 3, generation: 1 });
    expect(await kinds(alert!.id)).toEqual(['opened', 'failure_recorded', 'failure_recorded']);
    // Only the opening is a message; the counts are quiet root re-renders.
    const told = (await notificationStory(t.db, alert!.id)).filter((r) => !(r.data as { quiet?: boolean }).quiet);
    expect(told.map((r) => r.kind)).toEqual(['opened', 'opened']);
  });

  it('one success then a failure with recoverAfter 2: stays open and the healthy streak resets', async () => {
    await tick('failed');
    await tick('failed');
    await tick('succeeded');
    let [alert] = await alerts();
    expect(alert).toMatchObject({ status: 'open', healthyStreak: 1 });
    await tick('failed');
    [alert] = await alerts();
    expect(alert).toMatchObject({ status: 'open', healthyStreak: 0, consecutiveFailures: 1 });
    expect(await kinds(alert!.id)).toEqual(['opened', 'healthy_streak', 'failure_recorded']);
  });

  it('enough consecutive successes resolve it, recording the resolving run and the duration', async () => {
    await tick('failed');
    await tick('failed');
    await tick('succeeded');
    await tick('succeeded');
    const [alert] = await alerts();
    const last = await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ status: 'resolved', resolvedByRunId: last.id });
    expect(alert!.resolvedAt!.getTime() - alert!.openedAt.getTime()).toBe(2 * 3_600_000);
    const resolved = (await notificationStory(t.db, alert!.id)).filter((r) => r.kind === 'resolved');
    expect(resolved).toHaveLength(2);
    expect(resolved[0]!.data).toMatchObject({ runId: last.id, durationSeconds: 7200 });
  });

  it('the same error after resolution opens a new alert (a new thread), never reopens the old one', async () => {
    await tick('failed');
    await tick('failed');
    await tick('succeeded');
    await tick('succeeded');
    await tick('failed');
    expect(await alerts()).toHaveLength(1);
    await tick('failed');
    const [first, second] = await alerts();
    expect(first).toMatchObject({ status: 'resolved', generation: 1 });
    expect(second).toMatchObject({ status: 'open', generation: 2, consecutiveFailures: 2 });
    expect(second!.errorGroup).toBe(first!.errorGroup);
    expect(await kinds(second!.id)).toEqual(['opened']);
    expect(await kinds(first!.id)).toEqual(['opened', 'healthy_streak', 'resolved']);
  });

  it('a new error group inside an open alert is its own event', async () => {
    await tick('failed');
    await tick('failed');
    await tick('failed', 'connect ETIMEDOUT 10.0.4.17:5432');
    const [alert] = await alerts();
    expect(await kinds(alert!.id)).toEqual(['opened', 'error_group_changed', 'failure_recorded']);
    const changed = (await notificationStory(t.db, alert!.id)).find((r) => r.kind === 'error_group_changed')!;
    expect(changed.data).toMatchObject({ error: 'connect ETIMEDOUT 10.0.4.17:5432' });
    expect(alert).toMatchObject({ errorGroupCount: 1, lastError: 'connect ETIMEDOUT 10.0.4.17:5432' });
  });

  it('counts from history: a failed tick corrected to success by hand no longer counts', async () => {
    await tick('failed');
    await tick('failed');
    expect((await alerts())[0]).toMatchObject({ consecutiveFailures: 2 });
    // Someone marks the older failure as a success (a re-run done outside the bot); the next failure counts from there.
    await t.db.updateTable('runs').set({ status: 'succeeded' }).where('workflowId', '=', wf.id).where('tick', '=', hour(1)).execute();
    await tick('failed');
    expect((await alerts())[0]).toMatchObject({ consecutiveFailures: 2 });
  });

  it('a failed manual run resets the healthy streak but does not add to the tick count', async () => {
    await tick('failed');
    await tick('failed');
    await tick('succeeded');
    engine.clock.advance(minutes(5));
    await reportRun(t.db, wf, null, { status: 'failed', error: 'still broken', trigger: 'manual' }, engine.clock.now());
    await engine.drain();
    const [alert] = await alerts();
    expect(alert).toMatchObject({ status: 'open', healthyStreak: 0, consecutiveFailures: 2 });
  });
});
