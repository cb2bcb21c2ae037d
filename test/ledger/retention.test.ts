import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURATION_SAMPLES_KEPT, STREAK_FAILURES_KEPT } from '../../src/domain/retention.js';
import { NORMAL_SAMPLES } from '../../src/domain/run-duration.js';
import { loadHistoryFacts } from '../../src/ledger/history-facts.js';
import { runRetentionPass } from '../../src/ledger/retention.js';
import { loadNormalDurations } from '../../src/ledger/run-durations.js';
import { newRunRow, type RunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(() => t.drop());

const DAY = 86_400_000;
const NOW = new Date(T0.getTime() + 400 * DAY);
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

/** A finished, processed run recorded `days` ago. */
async function runAgo(workflowId: number, days: number, overrides: Parameters<typeof makeRun>[1] extends infer O ? Partial<O> : never = {}) {
  const run = await makeRun(t.db, { workflowId, tick: ago(days), startedAt: ago(days), finishedAt: ago(days), processedAt: ago(days), ...overrides });
  await sql`update runs set created_at = ${ago(days)} where id = ${run.id}`.execute(t.db);
  return run;
}

const exists = async (table: 'runs' | 'alerts' | 'alertEvents' | 'notifications' | 'alertThreads', column: string, id: number) =>
  (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))} where ${sql.ref(column)} = ${id}`.execute(t.db)).rows[0]!.n;

describe('retention', () => {
  it('removes old runs, settled notifications and long-resolved alerts in small batches, and never an open alert or its history', async () => {
    // A quiet workflow: old runs go (a tick's retry attempt with its original), recent and unprocessed ones stay.
    const quiet = await makeWorkflow(t.db, { tenantId: 'acme', name: 'quiet' });
    const old = [await runAgo(quiet.id, 60), await runAgo(quiet.id, 59), await runAgo(quiet.id, 58, { status: 'failed' })];
    const attempt = await runAgo(quiet.id, 58, { trigger: 'retry', attempt: 2, originalRunId: old[2]!.id, tick: ago(58) });
    const recent = await runAgo(quiet.id, 10);
    const unprocessed = await runAgo(quiet.id, 61, { status: 'failed', processedAt: null });
    const running = await runAgo(quiet.id, 62, { status: 'running', finishedAt: null, processedAt: null });

    // A workflow broken for 50 days: its open alert, its events and every run since its first failure stay.
    const broken = await makeWorkflow(t.db, { tenantId: 'acme', name: 'broken' });
    const before = await runAgo(broken.id, 55);
    const firstFailure = await runAgo(broken.id, 50, { status: 'failed' });
    const since = await runAgo(broken.id, 45, { status: 'failed' });
    const open = await insertAlert(t.db, broken.id, { openedAt: ago(50), firstRunId: firstFailure.id, lastRunId: since.id });
    const openEvent = await addEvent(t.db, open.id, 'opened', { now: ago(50) });
    await sql`update notifications set status = 'sent', created_at = ${ago(50)} where alert_id = ${open.id}`.execute(t.db);

    // Resolved 200 days ago: the alert, its events, threads, notifications and runs all go.
    const gone = await makeWorkflow(t.db, { tenantId: 'acme', name: 'long-fixed' });
    const goneRun = await runAgo(gone.id, 210, { status: 'failed' });
    const goneFix = await runAgo(gone.id, 200);
    const goneAlert = await insertAlert(t.db, gone.id, { status: 'resolved', openedAt: ago(210), resolvedAt: ago(200), firstRunId: goneRun.id, lastRunId: goneRun.id, resolvedByRunId: goneFix.id });
    await addEvent(t.db, goneAlert.id, 'opened', { now: ago(210) });
    await sql`update notifications set status = 'sent', created_at = ${ago(210)} where alert_id = ${goneAlert.id}`.execute(t.db);
    await sql`insert into alert_threads (alert_id, destination, channel, root_ts) values (${goneAlert.id}, 'slack:CACME', 'CACME', '1.000')`.execute(t.db);

    // Resolved 10 days ago: the alert, its events and the runs it points at stay; its old delivered notification goes.
    const fixed = await makeWorkflow(t.db, { tenantId: 'acme', name: 'recently-fixed' });
    const fixedRun = await runAgo(fixed.id, 60, { status: 'failed' });
    const fixedAlert = await insertAlert(t.db, fixed.id, { status: 'resolved', openedAt: ago(60), resolvedAt: ago(10), firstRunId: fixedRun.id, lastRunId: fixedRun.id });
    const fixedEvent = await addEvent(t.db, fixedAlert.id, 'opened', { now: ago(60) });
    await sql`update notifications set status = 'sent', created_at = ${ago(60)} where alert_id = ${fixedAlert.id}`.execute(t.db);

    // Housekeeping firings: the record of each pass and digest. Older than the run retention they go, in batches too.
    const firing = (job: string, days: number) => ({ job, fireAt: ago(days), replica: 'r1', startedAt: ago(days), finishedAt: ago(days), result: '{}' });
    await t.db.insertInto('housekeepingFirings').values([firing('retention', 45), firing('retention', 31), firing('digest:acme', 40), firing('retention', 29), firing('digest:acme', 1)]).execute();

    const result = await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 2 });

    for (const r of [...old, attempt, before, goneRun, goneFix]) expect(await exists('runs', 'id', r.id), `run ${r.id}`).toBe(0);
    for (const r of [recent, unprocessed, running, firstFailure, since, fixedRun]) expect(await exists('runs', 'id', r.id), `run ${r.id}`).toBe(1);
    expect(await exists('alerts', 'id', open.id)).toBe(1);
    expect(await exists('alertEvents', 'id', openEvent.id)).toBe(1);
    expect(await exists('notifications', 'alert_id', open.id)).toBe(1);
    expect(await exists('alerts', 'id', goneAlert.id)).toBe(0);
    expect(await exists('alertEvents', 'alert_id', goneAlert.id)).toBe(0);
    expect(await exists('notifications', 'alert_id', goneAlert.id)).toBe(0);
    expect(await exists('alertThreads', 'alert_id', goneAlert.id)).toBe(0);
    expect(await exists('alerts', 'id', fixedAlert.id)).toBe(1);
    expect(await exists('alertEvents', 'id', fixedEvent.id)).toBe(1);
    expect(await exists('notifications', 'alert_id', fixedAlert.id)).toBe(0);
    expect(result).toMatchObject({ alerts: 1, notifications: 1, runs: 7, firings: 3 });
    const kept = await t.db.selectFrom('housekeepingFirings').select(['job', 'fireAt']).orderBy('fireAt').execute();
    expect(kept).toEqual([
      { job: 'retention', fireAt: ago(29) },
      { job: 'digest:acme', fireAt: ago(1) },
    ]);
    // Batches of two: several statements, not one long one.
    expect(result.batches).toBeGreaterThan(4);

    // A second pass finds nothing more.
    expect(await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 2 })).toMatchObject({ alerts: 0, notifications: 0, runs: 0, firings: 0 });
  });

  it('keeps a failure streak that has not opened an alert yet: failures are counted from history (core idea 4)', async () => {
    // A weekly job that may fail four times in a row before anyone is told (alertAfter: 5): its streak reaches back 36 days.
    const weekly = await makeWorkflow(t.db, { tenantId: 'acme', name: 'weekly-export', cron: '0 3 * * 1', policy: { alertAfter: 5 } });
    const lastSuccess = await runAgo(weekly.id, 43);
    const streak = [];
    for (const days of [36, 29, 22, 15]) streak.push(await runAgo(weekly.id, days, { status: 'failed', error: 'quota exceeded' }));
    // An older failure a success has ended counts for nothing any more: it may go.
    const olderFailure = await runAgo(weekly.id, 50, { status: 'failed' });
    const count = async () => (await t.db.transaction().execute((trx) => loadHistoryFacts(trx, [weekly.id]))).get(weekly.id)!.failures;
    expect(await count()).toBe(4);

    await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 2 });

    // The next failure is the fifth in a row and must open the alert: none of the streak may have gone.
    expect(await count()).toBe(4);
    for (const r of streak) expect(await exists('runs', 'id', r.id), `run ${r.id}`).toBe(1);
    expect(await exists('runs', 'id', olderFailure.id)).toBe(0);
    expect(await exists('runs', 'id', lastSuccess.id)).toBe(0);
  });

  it('keeps the newest success after failures a kept alert pins: they are not counted again as the current streak', async () => {
    // Hourly (two failures open an alert): broken 45 days ago, resolved by hand, then a plain ping's success, then paused.
    const paused = await makeWorkflow(t.db, { tenantId: 'acme', name: 'paused-after-fix', cron: '0 * * * *' });
    const first = await runAgo(paused.id, 45, { status: 'failed', error: 'exit 1' });
    const last = await runAgo(paused.id, 44.9, { status: 'failed', error: 'exit 1' });
    await insertAlert(t.db, paused.id, { status: 'resolved', openedAt: ago(44.9), resolvedAt: ago(44), firstRunId: first.id, lastRunId: last.id });
    const success = await runAgo(paused.id, 43, { durationSeconds: null });
    const count = async () => (await t.db.transaction().execute((trx) => loadHistoryFacts(trx, [paused.id]))).get(paused.id)!.failures;
    expect(await count()).toBe(0);

    await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 3 });

    // Resumed, its next failure is the first of a streak, not the third: no alert opens on it.
    expect(await count()).toBe(0);
    expect(await exists('runs', 'id', success.id)).toBe(1);
    expect(await exists('runs', 'id', first.id)).toBe(1);
  });

  it('keeps the newest successes duration learning reads: a monthly job keeps its normal duration, a frequent one only its newest samples', async () => {
    const sample = (workflowId: number, days: number, seconds: number): RunRow => {
      const finished = ago(days);
      return newRunRow({ workflowId, tick: new Date(finished.getTime() - seconds * 1000), trigger: 'schedule', status: 'succeeded', attemptStatus: 'succeeded', durationSeconds: seconds, startedAt: new Date(finished.getTime() - seconds * 1000), finishedAt: finished, processedAt: finished });
    };
    const insertAged = async (rows: RunRow[]) => {
      const inserted = await t.db.insertInto('runs').values(rows).returning(['id']).execute();
      await sql`update runs set created_at = finished_at where id = any(${inserted.map((r) => r.id)}::bigint[])`.execute(t.db);
      return inserted.map((r) => r.id);
    };
    // Monthly: seven successes of about 20 minutes over seven months, one of them inside the 30 days.
    const monthly = await makeWorkflow(t.db, { tenantId: 'acme', name: 'monthly-close', cron: '0 4 1 * *' });
    const monthlyRuns = await insertAged([200, 170, 140, 110, 80, 50, 20].map((d, i) => sample(monthly.id, d, 1200 + i)));
    // A tick that recovered on its retry: the sample is the retry attempt, so the tick's original row stays with it.
    const [recoveredTick] = await insertAged([{ ...sample(monthly.id, 230, 1300), attemptStatus: 'failed', durationSeconds: null }]);
    const [recoveredAttempt] = await insertAged([{ ...sample(monthly.id, 229, 1250), trigger: 'retry', attempt: 2, originalRunId: recoveredTick! }]);
    // Every five minutes, all of it older than the retention: only the newest NORMAL_SAMPLES stay.
    const frequent = await makeWorkflow(t.db, { tenantId: 'acme', name: 'five-minutely' });
    const frequentRuns = await insertAged(Array.from({ length: NORMAL_SAMPLES + 5 }, (_, i) => sample(frequent.id, 40 - i / 288, 60 + (i % 7))));
    const normalOf = async (id: number) => (await loadNormalDurations(t.db, [id])).get(id) ?? null;
    const before = { monthly: await normalOf(monthly.id), frequent: await normalOf(frequent.id) };
    expect(before.monthly?.samples).toBe(8);

    await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 7 });

    // The normal is learned from exactly what it was learned from before: retention changed nothing about it.
    expect(DURATION_SAMPLES_KEPT).toBe(NORMAL_SAMPLES);
    expect(await normalOf(monthly.id)).toEqual(before.monthly);
    expect(await normalOf(frequent.id)).toEqual(before.frequent);
    for (const id of [...monthlyRuns, recoveredTick!, recoveredAttempt!]) expect(await exists('runs', 'id', id), `monthly run ${id}`).toBe(1);
    for (const id of frequentRuns.slice(0, 5)) expect(await exists('runs', 'id', id), `oldest frequent run ${id}`).toBe(0);
    for (const id of frequentRuns.slice(5)) expect(await exists('runs', 'id', id), `newest frequent run ${id}`).toBe(1);
  });

  it('bounds a streak that never recovers: past the retention a failure stays only among the streak\'s newest STREAK_FAILURES_KEPT, far above any alertAfter', async () => {
    // Every minute, broken since a success 40 days ago: STREAK_FAILURES_KEPT + 60 failures older than the retention, three recent ones.
    const broken = await makeWorkflow(t.db, { tenantId: 'acme', name: 'every-minute', cron: '* * * * *', policy: { alertAfter: 100 } });
    const success = await runAgo(broken.id, 40);
    const minuteAgo = (days: number, minutes: number) => new Date(ago(days).getTime() + minutes * 60_000);
    const failure = (at: Date): RunRow => newRunRow({ workflowId: broken.id, tick: at, trigger: 'schedule', status: 'failed', error: 'exit 1', startedAt: at, finishedAt: at, processedAt: at });
    const old = await t.db.insertInto('runs').values(Array.from({ length: STREAK_FAILURES_KEPT + 60 }, (_, i) => failure(minuteAgo(35, i)))).returning(['id']).execute();
    const recent = await t.db.insertInto('runs').values([1, 2, 3].map((m) => failure(minuteAgo(1, m)))).returning(['id']).execute();
    // A failure inside a maintenance window is not counted, so it does not push counted ones out.
    const inMaintenance = await t.db.insertInto('runs').values({ ...failure(minuteAgo(2, 0)), inMaintenance: true }).returning(['id']).executeTakeFirstOrThrow();
    await sql`update runs set created_at = finished_at where workflow_id = ${broken.id}`.execute(t.db);
    const count = async () => (await t.db.transaction().execute((trx) => loadHistoryFacts(trx, [broken.id]))).get(broken.id)!.failures;
    expect(await count()).toBe(STREAK_FAILURES_KEPT + 63);

    await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 50 });

    // The evaluator still counts far more than alertAfter: an alert opens (or reopens after a resolve by hand) as before.
    // The newest STREAK_FAILURES_KEPT: the three recent ones and the newest of the old ones (a busier window keeps all of its own).
    expect(await count()).toBe(STREAK_FAILURES_KEPT);
    for (const r of old.slice(0, 63)) expect(await exists('runs', 'id', r.id), `oldest failure ${r.id}`).toBe(0);
    for (const r of [...old.slice(63), ...recent, inMaintenance]) expect(await exists('runs', 'id', r.id), `kept failure ${r.id}`).toBe(1);
    expect(await exists('runs', 'id', success.id)).toBe(0);
    // Steady: the next pass removes nothing more.
    expect((await runRetentionPass(t.db, NOW, { runDays: 30, alertDays: 180, notificationDays: 30, batch: 50 })).runs).toBe(0);
  });
});
