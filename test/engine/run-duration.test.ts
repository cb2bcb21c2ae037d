import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { checkRunDurations } from '../../src/engine/run-duration.js';
import { loadNormalDurations } from '../../src/ledger/run-durations.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { finishRun, newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * Running long and completion deadlines on two replicas at once (issue 16):
 * each verdict is decided once, told once per destination, and the alert it
 * opened resolves on the run's success like any other.
 */

const TICK = at('2026-03-10T02:00:00Z');
let t: TestDatabase;
let pools: Db[] = [];
let engines: Engine[] = [];
const clock = new ManualClock(TICK);
let hanging: Workflow;
let late: Workflow;

/** Six nights of 20 minutes (one of 25): the normal duration is 20 minutes. */
async function history(workflow: Workflow) {
  const rows = [1, 2, 3, 4, 5, 6].map((d) => {
    const tick = new Date(TICK.getTime() - d * 86_400_000);
    const duration = d === 3 ? 1500 : 1200;
    return newRunRow({ workflowId: workflow.id, tick, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: tick, finishedAt: new Date(tick.getTime() + duration * 1000), durationSeconds: duration, processedAt: tick });
  });
  await t.db.insertInto('runs').values(rows).execute();
}

async function running(workflow: Workflow) {
  return t.db
    .insertInto('runs')
    .values(newRunRow({ workflowId: workflow.id, tick: TICK, trigger: 'schedule', status: 'running', startedAt: TICK, deadlineAt: new Date(TICK.getTime() + 6 * 3_600_000) }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

const bothReplicas = () => Promise.all(engines.map((e) => checkRunDurations(e.deps)));
const eventsOf = (workflowId: number) =>
  t.db.selectFrom('alertEvents').innerJoin('alerts', 'alerts.id', 'alertEvents.alertId').select(['alertEvents.id', 'alertEvents.kind', 'alertEvents.data', 'alerts.severity', 'alerts.cause']).where('alerts.workflowId', '=', workflowId).orderBy('alertEvents.id').execute();
const rowsFor = async (eventId: number) => (await t.db.selectFrom('notifications').select('destination').where('eventId', '=', eventId).execute()).map((r) => r.destination).sort();

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const createdAt = at('2026-03-01T00:00:00Z');
  hanging = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', createdAt, policy: JSON.stringify({ completeBy: { time: '06:00' } }) });
  late = await makeWorkflow(t.db, { name: 'export', cron: '0 2 * * *', createdAt, policy: JSON.stringify({ completeBy: { time: '04:00', timeZone: 'Europe/Berlin' } }) });
  await history(hanging);
  const yesterday = new Date(TICK.getTime() - 86_400_000);
  await t.db.insertInto('runs').values(newRunRow({ workflowId: late.id, tick: yesterday, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: yesterday, finishedAt: new Date(yesterday.getTime() + 600_000), durationSeconds: 600, processedAt: yesterday })).execute();
  pools = [createDb(createPool(t.url, 5)), createDb(createPool(t.url, 5))];
  engines = pools.map((db, i) => createEngine(db, TICK, {}, `replica-${i}`, clock));
});
afterAll(async () => {
  for (const p of pools) await p.destroy();
  await t.drop();
});

describe('run duration on two replicas', () => {
  it('learns the normal duration from the successes, robust to the slow night', async () => {
    const normals = await loadNormalDurations(t.db, [hanging.id, late.id]);
    expect(normals.get(hanging.id)).toEqual({ medianSeconds: 1200, madSeconds: 0, samples: 6, usualLongestSeconds: 1200 });
    expect(normals.get(late.id)).toBeNull();
  });

  it('tells "running long" once, an hour in, as a warning that escalates at the timeout', async () => {
    const run = await running(hanging);
    await running(late);
    clock.set(at('2026-03-10T02:59:59Z'));
    await bothReplicas();
    expect(await eventsOf(hanging.id)).toEqual([]);

    clock.set(at('2026-03-10T03:00:00Z'));
    await bothReplicas();
    await bothReplicas();
    const events = await eventsOf(hanging.id);
    expect(events.map((e) => [e.kind, e.severity, e.cause])).toEqual([['opened', 'warning', 'running_long']]);
    expect(events[0]!.data).toMatchObject({ consecutiveFailures: 0, runId: run.id, cause: { kind: 'running_long', runningSeconds: 3600, afterSeconds: 3600 } });
    expect(await rowsFor(events[0]!.id)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', hanging.id).executeTakeFirstOrThrow();
    expect(alert.escalateAt).toEqual(at('2026-03-10T08:00:00Z'));
    expect(alert.lastRunId).toBeNull();
  });

  it('a missed completion deadline opens a critical alert once, or is told once in the open thread', async () => {
    // 04:00 in Berlin is 03:00 UTC: the export has not succeeded.
    clock.set(at('2026-03-10T03:00:00Z'));
    await bothReplicas();
    await bothReplicas();
    const exportEvents = await eventsOf(late.id);
    // Never "running long" (no history, no verdict); yesterday's tick succeeded in time.
    expect(exportEvents.map((e) => [e.kind, e.severity, e.cause])).toEqual([['opened', 'critical', 'completion_missed']]);
    expect(exportEvents[0]!.data).toMatchObject({ cause: { kind: 'completion_missed', tick: TICK.toISOString(), deadline: '2026-03-10T03:00:00.000Z', running: true } });

    clock.set(at('2026-03-10T06:00:00Z'));
    await bothReplicas();
    await bothReplicas();
    const events = await eventsOf(hanging.id);
    expect(events.map((e) => e.kind)).toEqual(['opened', 'completion_missed']);
    expect(await rowsFor(events[1]!.id)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
  });

  it('the run that was long succeeds: the alert resolves, and its duration is kept', async () => {
    const run = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', hanging.id).where('status', '=', 'running').executeTakeFirstOrThrow();
    clock.set(at('2026-03-10T06:30:00Z'));
    await finishRun(engines[0]!.deps, run.id, { status: 'succeeded' });
    await Promise.all(engines.map((e) => pollFinishedRuns(e.deps)));
    const events = await eventsOf(hanging.id);
    expect(events.map((e) => e.kind)).toEqual(['opened', 'completion_missed', 'resolved']);
    const finished = await t.db.selectFrom('runs').select(['durationSeconds', 'longNoticedAt']).where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(finished).toEqual({ durationSeconds: 4.5 * 3600, longNoticedAt: at('2026-03-10T03:00:00Z') });
  });
});

describe('too fast', () => {
  it('a success under minDurationSeconds counts as a failure; in an open alert the thread is told', async () => {
    const quick = await makeWorkflow(t.db, { name: 'quick', cron: '0 * * * *', policy: JSON.stringify({ minDurationSeconds: 60, alertAfter: 1, retries: 0 }) });
    const finishedIn = async (tick: string, seconds: number) => {
      const start = at(tick);
      await t.db
        .insertInto('runs')
        .values(newRunRow({ workflowId: quick.id, tick: start, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: start, finishedAt: new Date(start.getTime() + seconds * 1000), durationSeconds: seconds }))
        .execute();
      clock.set(new Date(start.getTime() + seconds * 1000));
      await pollFinishedRuns(engines[0]!.deps);
    };
    await finishedIn('2026-03-10T07:00:00Z', 3);
    await finishedIn('2026-03-10T08:00:00Z', 2);
    const runs = await t.db.selectFrom('runs').select(['status', 'error']).where('workflowId', '=', quick.id).orderBy('id').execute();
    expect(runs).toEqual([
      { status: 'failed', error: 'too fast: finished in 3s, expected at least 60s' },
      { status: 'failed', error: 'too fast: finished in 2s, expected at least 60s' },
    ]);
    // Opened by a too-fast run (its root's last error says so): the next one is counted, not told again.
    expect((await eventsOf(quick.id)).map((e) => e.kind)).toEqual(['opened', 'failure_recorded']);
    await finishedIn('2026-03-10T09:00:00Z', 90);
    expect((await eventsOf(quick.id)).map((e) => e.kind)).toEqual(['opened', 'failure_recorded', 'resolved']);
  });

});

describe('inside a maintenance window', () => {
  it('a run going long is claimed but not told', async () => {
    const vacuumed = await makeWorkflow(t.db, { name: 'vacuumed', cron: '0 2 * * *', createdAt: at('2026-03-01T00:00:00Z') });
    await history(vacuumed);
    const start = at('2026-03-11T02:00:00Z');
    const run = await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: vacuumed.id, tick: start, trigger: 'schedule', status: 'running', startedAt: start, deadlineAt: new Date(start.getTime() + 6 * 3_600_000) }))
      .returningAll()
      .executeTakeFirstOrThrow();
    await t.db.insertInto('maintenanceWindows').values({ tenantId: 'acme', workflowId: vacuumed.id, startsAt: start, endsAt: at('2026-03-11T05:00:00Z'), reason: 'vacuum', createdBy: 'test', recurrence: null, toldAt: null, createdAt: start }).execute();
    clock.set(at('2026-03-11T03:05:00Z'));
    await bothReplicas();
    expect(await eventsOf(vacuumed.id)).toEqual([]);
    const claimed = await t.db.selectFrom('runs').select('longNoticedAt').where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(claimed.longNoticedAt).toEqual(at('2026-03-11T03:05:00Z'));
  });
});

describe('an alert opened by a cause, with an older failure below the threshold in history', () => {
  it('a failed manual run is told as itself, not as a repeat of the old failure; the long run failing is recorded', async () => {
    // Hourly, alerting at the second failure: 01:00 failed (one of two), 02:00 runs long.
    const stale = await makeWorkflow(t.db, { name: 'stale', cron: '0 * * * *', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ alertAfter: 2, retries: 0, runningLongAfterSeconds: 600 }) });
    const one = at('2026-03-12T01:00:00Z');
    const old = await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: stale.id, tick: one, trigger: 'schedule', status: 'failed', attemptStatus: 'failed', error: 'old boom', errorGroup: 'old', startedAt: one, finishedAt: new Date(one.getTime() + 60_000), processedAt: new Date(one.getTime() + 60_000) }))
      .returningAll()
      .executeTakeFirstOrThrow();
    const two = at('2026-03-12T02:00:00Z');
    const long = await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: stale.id, tick: two, trigger: 'schedule', status: 'running', startedAt: two, deadlineAt: new Date(two.getTime() + 54 * 60_000) }))
      .returningAll()
      .executeTakeFirstOrThrow();
    clock.set(at('2026-03-12T02:10:00Z'));
    await bothReplicas();
    expect((await eventsOf(stale.id)).map((e) => [e.kind, e.cause])).toEqual([['opened', 'running_long']]);

    // Someone tries a manual run; it fails. The thread hears that run, and nothing about 01:00 again.
    const manualAt = at('2026-03-12T02:12:00Z');
    const manual = await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: stale.id, tick: null, trigger: 'manual', status: 'failed', attemptStatus: 'failed', error: 'manual boom', startedAt: manualAt, finishedAt: new Date(manualAt.getTime() + 60_000), requestedBy: 'U1' }))
      .returningAll()
      .executeTakeFirstOrThrow();
    clock.set(new Date(manualAt.getTime() + 60_000));
    await pollFinishedRuns(engines[0]!.deps);
    const afterManual = await eventsOf(stale.id);
    expect(afterManual.map((e) => e.kind)).toEqual(['opened', 'run_finished']);
    expect(afterManual[1]!.data).toMatchObject({ runId: manual.id, status: 'failed' });
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', stale.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ consecutiveFailures: 0, lastError: null });
    expect(old.id).not.toBe(alert.lastRunId);

    // The long run itself fails: that is a new failure, counted with the one before it.
    clock.set(at('2026-03-12T02:20:00Z'));
    await finishRun(engines[0]!.deps, long.id, { status: 'failed', error: 'long boom' });
    await pollFinishedRuns(engines[0]!.deps);
    const recorded = (await eventsOf(stale.id)).filter((e) => e.kind === 'failure_recorded');
    expect(recorded.map((e) => e.data)).toEqual([expect.objectContaining({ runId: long.id, consecutiveFailures: 2, error: 'long boom' })]);
  });

  it('the first failure of a running-long alert is its first error, not "a different error appeared"', async () => {
    const slow = await makeWorkflow(t.db, { name: 'slow-first', cron: '0 * * * *', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ retries: 0, runningLongAfterSeconds: 600 }) });
    const tick = at('2026-03-12T05:00:00Z');
    const long = await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: slow.id, tick, trigger: 'schedule', status: 'running', startedAt: tick, deadlineAt: new Date(tick.getTime() + 54 * 60_000) }))
      .returningAll()
      .executeTakeFirstOrThrow();
    clock.set(at('2026-03-12T05:10:00Z'));
    await bothReplicas();
    clock.set(at('2026-03-12T05:20:00Z'));
    await finishRun(engines[0]!.deps, long.id, { status: 'failed', error: 'disk full' });
    await pollFinishedRuns(engines[0]!.deps);
    expect((await eventsOf(slow.id)).map((e) => e.kind)).toEqual(['opened', 'failure_recorded']);
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', slow.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ consecutiveFailures: 1, lastError: 'disk full', errorGroupCount: 1, errorGroupFirstAt: at('2026-03-12T05:20:00Z') });
    expect(alert.errorGroup).not.toBeNull();
  });
});

describe('an alert opened by a cause, with the workflow healthy before it', () => {
  it('a failure held by maintenance does not resolve it with the success from before it opened', async () => {
    const wf = await makeWorkflow(t.db, { name: 'healthy-before', cron: '0 * * * *', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ retries: 0, runningLongAfterSeconds: 600 }) });
    const one = at('2026-03-13T01:00:00Z');
    await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: wf.id, tick: one, trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', startedAt: one, finishedAt: new Date(one.getTime() + 60_000), processedAt: new Date(one.getTime() + 60_000) }))
      .execute();
    const two = at('2026-03-13T02:00:00Z');
    await t.db.insertInto('runs').values(newRunRow({ workflowId: wf.id, tick: two, trigger: 'schedule', status: 'running', startedAt: two, deadlineAt: new Date(two.getTime() + 54 * 60_000) })).execute();
    clock.set(at('2026-03-13T02:10:00Z'));
    await bothReplicas();
    expect((await eventsOf(wf.id)).map((e) => [e.kind, e.cause])).toEqual([['opened', 'running_long']]);

    await t.db.insertInto('maintenanceWindows').values({ tenantId: 'acme', workflowId: wf.id, startsAt: at('2026-03-13T02:30:00Z'), endsAt: at('2026-03-13T04:00:00Z'), reason: 'db upgrade', createdBy: 'test', recurrence: null, toldAt: null, createdAt: two }).execute();
    const three = at('2026-03-13T03:00:00Z');
    await t.db
      .insertInto('runs')
      .values(newRunRow({ workflowId: wf.id, tick: three, trigger: 'schedule', status: 'failed', attemptStatus: 'failed', error: 'db down for upgrade', startedAt: three, finishedAt: new Date(three.getTime() + 60_000) }))
      .execute();
    clock.set(new Date(three.getTime() + 60_000));
    await pollFinishedRuns(engines[0]!.deps);
    // 02:00 is still running long; nothing has succeeded since the alert opened.
    expect((await eventsOf(wf.id)).map((e) => e.kind)).toEqual(['opened']);
    expect(await t.db.selectFrom('alerts').select('status').where('workflowId', '=', wf.id).executeTakeFirstOrThrow()).toEqual({ status: 'open' });
  });
});

describe('completion deadlines and bot outages', () => {
  it("a tick every replica was away for (recorded skipped) is not held to its deadline; the next tick is", async () => {
    const outage = await makeWorkflow(t.db, { name: 'outage-nightly', cron: '0 2 * * *', mode: 'observed', createdAt: at('2026-03-01T00:00:00Z'), policy: JSON.stringify({ completeBy: { time: '06:00' } }) });
    // The bot was down from 01:00 to 07:00 (this file's last days: its clock only goes forward): its freshness check recorded the 02:00 tick skipped on its return.
    await t.db.insertInto('runs').values(newRunRow({ workflowId: outage.id, tick: at('2026-03-20T02:00:00Z'), trigger: 'schedule', status: 'skipped', finishedAt: at('2026-03-20T07:00:00Z'), processedAt: at('2026-03-20T07:00:00Z') })).execute();
    clock.set(at('2026-03-20T07:00:00Z'));
    await bothReplicas();
    expect(await eventsOf(outage.id)).toEqual([]);

    // The next night the bot is up and nothing succeeds by 06:00: that is the job's.
    clock.set(at('2026-03-21T06:00:00Z'));
    await bothReplicas();
    expect((await eventsOf(outage.id)).map((e) => [e.kind, e.cause])).toEqual([['opened', 'completion_missed']]);
  });

  it('an observed tick a DST gap lets the outside scheduler skip (no run yet) is not held to its deadline; the next night\'s is', async () => {
    // Berlin, 29 March 2026: 02:30 does not exist; the tick is 03:30 CEST (01:30 UTC), due done by 03:45 CEST (01:45 UTC),
    // before the freshness detector judges the tick (02:00 UTC): a Kubernetes CronJob runs nothing that night.
    const policy = JSON.stringify({ completeBy: { time: '03:45' } });
    const wf = await makeWorkflow(t.db, { name: 'gap-nightly', cron: '30 2 * * *', timezone: 'Europe/Berlin', mode: 'observed', createdAt: at('2026-03-01T00:00:00Z'), policy });
    clock.set(at('2026-03-29T01:45:00Z'));
    await bothReplicas();
    expect(await eventsOf(wf.id)).toEqual([]);
    // The next night every scheduler runs 02:30: nothing by 03:45 CEST is the job's.
    clock.set(at('2026-03-30T01:45:00Z'));
    await bothReplicas();
    expect((await eventsOf(wf.id)).map((e) => [e.kind, e.cause])).toEqual([['opened', 'completion_missed']]);
  });
});
