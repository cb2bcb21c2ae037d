import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { reportRun } from '../../src/services/ingest.js';
import { eventText, plainEventText } from '../../src/notify/event-text.js';
import { recordPing } from '../../src/services/pings.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, stepUntil, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A job that sends only its end (no start) and runs longer than its grace:
 * its tick is recorded missed at tick + grace, then the end arrives. The end
 * is the tick's late report: it takes the tick's row over with its real
 * outcome, and the recovery it brings says why the alert happened.
 */

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, '2026-03-10T01:59:00Z');
  await makeTenant(t.db);
  // Daily: grace 30 minutes, one failure opens a critical alert.
  wf = await makeWorkflow(t.db, { name: 'nightly-export', cron: '0 2 * * *', mode: 'observed', nextTickAt: at('2026-03-10T02:00:00Z') });
});
afterEach(async () => t.drop());

const runsOf = () => t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const alertsOf = () => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const eventsOf = (alertId: number) => t.db.selectFrom('alertEvents').select(['kind', 'data']).where('alertId', '=', alertId).orderBy('id').execute();

describe('an end reported after its tick was recorded missed', () => {
  it('takes the missed row over: a late success is a success, the note keeps the missed record, and the recovery advises a grace', async () => {
    await stepUntil(engine, at('2026-03-10T02:31:00Z'));
    const [missed] = await runsOf();
    expect(missed).toMatchObject({ tick: at('2026-03-10T02:00:00Z'), status: 'missed' });
    const [alert] = await alertsOf();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical' });

    engine.clock.set(at('2026-03-10T03:10:00Z'));
    const result = await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'success' } });
    expect(result).toMatchObject({ kind: 'recorded', run: { id: missed!.id } });
    const rows = await runsOf();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: missed!.id,
      tick: at('2026-03-10T02:00:00Z'),
      trigger: 'schedule',
      status: 'succeeded',
      error: null,
      errorGroup: null,
      outcomeNote: 'reported 40 minutes after its grace (recorded missed at 2026-03-10T02:30:00.000Z)',
      processedAt: at('2026-03-10T03:10:00Z'),
    });
    expect((await alertsOf())[0]).toMatchObject({ id: alert!.id, status: 'resolved', resolvedByRunId: missed!.id });
    const resolved = (await eventsOf(alert!.id)).find((e) => e.kind === 'resolved');
    // 70 minutes after the tick, a fifth more, rounded up to five minutes: 85 minutes.
    expect(resolved?.data).toMatchObject({ runId: missed!.id, lateReport: { afterGraceSeconds: 2400, graceToCoverSeconds: 5100 } });
  });

  it('a late failure takes the row over too: one failure of the tick, with the real error', async () => {
    await stepUntil(engine, at('2026-03-10T02:31:00Z'));
    engine.clock.set(at('2026-03-10T03:10:00Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'fail' }, body: 'disk full' });
    const rows = await runsOf();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'reported failed: disk full', tick: at('2026-03-10T02:00:00Z') });
    const [alert] = await alertsOf();
    expect(alert).toMatchObject({ status: 'open', consecutiveFailures: 1, lastError: 'reported failed: disk full' });
    expect((await eventsOf(alert!.id)).map((e) => e.kind)).toEqual(['opened', 'error_group_changed', 'failure_recorded']);
  });

  it('an end after the grace that comes before the tick was recorded missed takes the tick: nothing is missed, nothing opens', async () => {
    engine.clock.set(at('2026-03-10T02:45:00Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'success' } });
    await stepUntil(engine, at('2026-03-10T03:00:00Z'));
    expect((await runsOf()).map((r) => [r.tick, r.status, r.trigger])).toEqual([[at('2026-03-10T02:00:00Z'), 'succeeded', 'schedule']]);
    expect(await alertsOf()).toEqual([]);
  });

  it('over the API, a finished report naming a missed tick takes its row over instead of a 409', async () => {
    await stepUntil(engine, at('2026-03-10T02:31:00Z'));
    engine.clock.set(at('2026-03-10T03:10:00Z'));
    const result = await reportRun(engine.deps, { tenant: 'acme', workflow: wf.name, status: 'succeeded', tick: at('2026-03-10T02:00:00Z'), rows: 12 }, {});
    expect(result).toMatchObject({ kind: 'created', run: { status: 'succeeded', rows: 12, tick: at('2026-03-10T02:00:00Z') } });
    expect(await runsOf()).toHaveLength(1);
    expect((await alertsOf())[0]!.status).toBe('resolved');
    // A start naming it is still refused: the tick has its row.
    expect(await reportRun(engine.deps, { tenant: 'acme', workflow: wf.name, status: 'running', tick: at('2026-03-10T02:00:00Z') }, {})).toMatchObject({ kind: 'tick_taken' });
  });
});

describe('a crontab kept in UTC for a workflow declared in another zone', () => {
  it('each run, outside every tick, says why: on time for the same cron in UTC, and how to fix the crontab', async () => {
    const berlin = await makeWorkflow(t.db, { name: 'berlin-export', cron: '0 2 * * *', timezone: 'Europe/Berlin', mode: 'observed', nextTickAt: at('2026-03-11T01:00:00Z') });
    // 02:00 Berlin (01:00 UTC) is recorded missed at 01:30 UTC; the crontab's 02:00 comes at 02:00 UTC.
    await stepUntil(engine, at('2026-03-11T02:00:00Z'), 600_000);
    await recordPing(engine.deps, { key: berlin.pingKey!, signal: { kind: 'start' } });
    engine.clock.set(at('2026-03-11T02:10:00Z'));
    await recordPing(engine.deps, { key: berlin.pingKey!, signal: { kind: 'success' } });
    const rows = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', berlin.id).orderBy('id').execute();
    expect(rows.map((r) => [r.tick, r.status, r.trigger])).toEqual([
      [at('2026-03-11T01:00:00Z'), 'missed', 'schedule'],
      [null, 'succeeded', 'external'],
    ]);
    // Before, nothing said why: a critical "missed" page every night, then a recovery by a run outside any tick.
    expect(rows[1]!.outcomeNote).toBe(
      'started on time for 02:00 UTC, a fire time of "0 2 * * *" in UTC but not in Europe/Berlin, so it is outside every tick: if the job\'s crontab runs in UTC, put CRON_TZ=Europe/Berlin above it (or declare timezone UTC)',
    );
    // The recovery it brings, in the thread, says it too: the on-call reads the thread, not History.
    const [alert] = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', berlin.id).execute();
    expect(alert).toMatchObject({ status: 'resolved', resolvedByRunId: rows[1]!.id });
    const resolved = (await eventsOf(alert!.id)).find((e) => e.kind === 'resolved');
    expect(resolved?.data).toMatchObject({ runId: rows[1]!.id, trigger: 'external', outsideTicks: rows[1]!.outcomeNote });
    const text = plainEventText(eventText({ event: { kind: 'resolved', actor: null, data: resolved!.data, at: at('2026-03-11T02:10:00Z') }, alert: alert!, workflow: berlin }));
    expect(text).toContain(`Run #${rows[1]!.id} started on time for 02:00 UTC,`);
  });
});

describe('a start reported after its tick\'s grace (the tick is missed: the job did not start in time)', () => {
  it('is a run outside any tick that says how late it came and what grace would have covered it, and so does the recovery it brings', async () => {
    await stepUntil(engine, at('2026-03-10T02:31:00Z'));
    const [alert] = await alertsOf();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical' });
    engine.clock.set(at('2026-03-10T02:40:00Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'start' } });
    await stepUntil(engine, at('2026-03-10T03:10:00Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'success' } });
    const rows = await runsOf();
    expect(rows.map((r) => [r.tick, r.status, r.trigger])).toEqual([
      [at('2026-03-10T02:00:00Z'), 'missed', 'schedule'],
      [null, 'succeeded', 'external'],
    ]);
    // 40 minutes after the tick, a fifth more, rounded up to five minutes: 50 minutes.
    const note = 'started 40 minutes after its 02:00 UTC tick, past the tick\'s grace (30 minutes), so the tick was recorded missed: if this is that tick\'s run, consider graceSeconds: 3000 or more';
    expect(rows[1]!.outcomeNote).toBe(note);
    expect((await alertsOf())[0]).toMatchObject({ id: alert!.id, status: 'resolved', resolvedByRunId: rows[1]!.id });
    const resolved = (await eventsOf(alert!.id)).find((e) => e.kind === 'resolved');
    expect(resolved?.data).toMatchObject({ outsideTicks: note });
  });

  it('a rerun after its tick succeeded says nothing of the kind', async () => {
    engine.clock.set(at('2026-03-10T02:00:10Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'success' } });
    engine.clock.set(at('2026-03-10T02:40:00Z'));
    await recordPing(engine.deps, { key: wf.pingKey!, signal: { kind: 'start' } });
    expect((await runsOf()).map((r) => [r.trigger, r.outcomeNote])).toEqual([
      ['schedule', null],
      ['external', null],
    ]);
  });
});

