import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, reportRun, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

const START = new Date('2026-03-10T02:00:00Z');
const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db);
});
afterEach(async () => t.drop());

describe('silence is data', () => {
  it('an observed tick with no run by tick + grace becomes a missed row that counts; three of them open a warning', async () => {
    const wf = await makeWorkflow(t.db, { name: 'feed', cron: '*/5 * * * *', nextTickAt: at('02:05') });
    await engine.step(); // the monitor is up from 02:00
    await stepUntil(engine, at('02:07'));
    // Grace for a five-minute cadence is 60 s: 02:05 is missed at 02:06.
    const rows = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'missed', tick: at('02:05'), trigger: 'schedule' });
    expect(rows[0]!.processedAt).not.toBeNull();
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt).toEqual(at('02:10'));

    // 02:10 reports in on time; 02:15, 02:20, 02:25 are missed.
    engine.clock.set(at('02:10'));
    await reportRun(t.db, wf, at('02:10'), { status: 'succeeded' }, at('02:10'));
    await stepUntil(engine, at('02:26'));
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirst();
    expect(alert).toMatchObject({ status: 'open', severity: 'warning', consecutiveFailures: 3 });
    const opened = await t.db.selectFrom('alertEvents').select('data').where('alertId', '=', alert!.id).where('kind', '=', 'opened').executeTakeFirstOrThrow();
    expect(opened.data).toMatchObject({ missed: true, noLauncher: true, retries: 0 });
    const statuses = await t.db.selectFrom('runs').select(['tick', 'status']).where('workflowId', '=', wf.id).orderBy('tick').execute();
    expect(statuses.map((s) => s.status)).toEqual(['missed', 'succeeded', 'missed', 'missed', 'missed']);
  });

  it('ticks that fell while no replica was running are skipped, not missed, and page nobody', async () => {
    const wf = await makeWorkflow(t.db, { name: 'feed', cron: '*/5 * * * *', nextTickAt: at('02:05') });
    await engine.step(); // replica A up at 02:00, then gone
    // A new replica starts at 03:00: everything between was unobserved.
    const later = createEngine(t.db, at('03:00'), {}, 'engine-b');
    await later.step();
    const rows = await t.db.selectFrom('runs').select(['tick', 'status', 'processedAt']).where('workflowId', '=', wf.id).orderBy('tick').execute();
    expect(rows.length).toBe(11); // 02:05 … 02:55
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['skipped']));
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
    // From now on the new replica is watching: a tick without a run is missed again.
    for (let i = 0; i < 7; i++) {
      later.clock.advance(minutes(1));
      await later.step();
    }
    const next = await t.db.selectFrom('runs').select(['status']).where('workflowId', '=', wf.id).where('tick', '=', at('03:05')).executeTakeFirstOrThrow();
    expect(next.status).toBe('missed');
  });

  it('a tick whose grace the bot was down for part of is skipped: a report sent then reached nobody, so a nightly pages nobody', async () => {
    // Daily: grace 30 min. The job may report any time up to 02:30.
    const wf = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', nextTickAt: at('02:00') });
    await engine.step(); // replica A up from 02:00
    await stepUntil(engine, at('02:05')); // and until 02:05; then every replica is gone
    // The job finished at 02:20 and reported to nobody. A replica is back at 02:40.
    const later = createEngine(t.db, at('02:40'), {}, 'engine-b');
    await later.step();
    const row = await t.db.selectFrom('runs').select(['status', 'processedAt']).where('workflowId', '=', wf.id).where('tick', '=', at('02:00')).executeTakeFirstOrThrow();
    expect(row.status).toBe('skipped');
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a replica last seen shortly before a tick did not watch it: the tick is skipped, not missed', async () => {
    const wf = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', nextTickAt: at('02:00') });
    const early = createEngine(t.db, new Date('2026-03-10T01:50:00Z'), {}, 'engine-early');
    await early.step();
    await stepUntil(early, new Date('2026-03-10T01:59:30Z'), 5_000); // beating every 5 s; its last beat 30 s before the tick, then every replica is gone
    const later = createEngine(t.db, at('03:00'), {}, 'engine-b');
    await later.step();
    const row = await t.db.selectFrom('runs').select(['status']).where('workflowId', '=', wf.id).where('tick', '=', at('02:00')).executeTakeFirstOrThrow();
    expect(row.status).toBe('skipped');
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
  });

  it('a rolling restart that leaves a replica up throughout the grace still records a silent tick missed', async () => {
    const wf = await makeWorkflow(t.db, { name: 'nightly', cron: '0 2 * * *', nextTickAt: at('02:00') });
    await engine.step();
    await stepUntil(engine, at('02:10')); // replica A from 02:00 until 02:10
    const b = createEngine(t.db, at('02:10'), {}, 'engine-b'); // B from 02:10, the moment A goes
    await b.step();
    await stepUntil(b, at('02:31'));
    const row = await t.db.selectFrom('runs').select(['status']).where('workflowId', '=', wf.id).where('tick', '=', at('02:00')).executeTakeFirstOrThrow();
    expect(row.status).toBe('missed');
    expect(await t.db.selectFrom('alerts').select('severity').execute()).toEqual([{ severity: 'critical' }]);
  });

  it('a run still running past its timeout is failed "timed out" (a minute later while a replica supervises it) and evaluated like any failure', async () => {
    const wf = await makeWorkflow(t.db, {
      name: 'nightly',
      cron: '0 2 * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      policy: JSON.stringify({ timeoutSeconds: 600, retries: 0 }),
    });
    engine.launcher.script(wf.id, 'hold');
    const run = await fireTick(engine, wf, at('02:00'));
    // A held run's lease is kept fresh by a supervising launcher; here it is the deadline that passes.
    await t.db.updateTable('runs').set({ leaseExpiresAt: at('05:00') }).where('id', '=', run.id).execute();
    await stepUntil(engine, at('02:09'));
    expect((await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).status).toBe('running');
    // At the deadline it is its supervisor's to end (its watchdog reports it with its output); this one never does.
    await stepUntil(engine, at('02:10'));
    expect((await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).status).toBe('running');
    await stepUntil(engine, at('02:11'));
    const failed = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(failed).toMatchObject({ status: 'failed', error: 'timed out', attemptStatus: 'failed' });
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ severity: 'critical', lastError: 'timed out' });
  });

  it('a running attempt whose lease expired (its replica died) is failed "worker lost"', async () => {
    const wf = await makeWorkflow(t.db, { name: 'hourly', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), policy: JSON.stringify({ retries: 0 }) });
    engine.launcher.script(wf.id, 'hold');
    const run = await fireTick(engine, wf, at('02:00'));
    const other = createEngine(t.db, at('02:00'), {}, 'engine-b', engine.clock);
    engine.clock.advance(minutes(2));
    await Promise.all([engine.step(), other.step()]);
    const lost = await t.db.selectFrom('runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
    expect(lost).toMatchObject({ status: 'failed', error: 'worker lost' });
    expect(lost.processedAt).not.toBeNull();
  });

  it('a success with fewer rows than minRows is a failure "empty output"', async () => {
    const wf = await makeWorkflow(t.db, { name: 'export', cron: '0 2 * * *', policy: JSON.stringify({ minRows: 10 }) });
    await reportRun(t.db, wf, at('02:00'), { status: 'succeeded', rows: 0 }, at('02:05'));
    engine.clock.set(at('02:05'));
    await engine.drain();
    const run = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(run).toMatchObject({ status: 'failed', error: 'empty output: 0 rows, expected at least 10' });
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ severity: 'critical', lastError: 'empty output: 0 rows, expected at least 10' });

    // Enough rows the next night: resolved.
    await reportRun(t.db, wf, new Date('2026-03-11T02:00:00Z'), { status: 'succeeded', rows: 11 }, new Date('2026-03-11T02:05:00Z'));
    engine.clock.set('2026-03-11T02:05:00Z');
    await engine.drain();
    expect((await t.db.selectFrom('alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('resolved');
  });
});
