import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { takeOwnership } from '../../src/ledger/alert-actions.js';
import { startMaintenance } from '../../src/services/maintenance-windows.js';
import { pauseWorkflow, resumeWorkflow } from '../../src/services/workflow-state.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, notificationStory, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeRun, makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

const START = new Date('2026-03-10T02:00:00Z');
const acme = { tenantId: 'acme' };

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;
let tickAt: Date;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  wf = await makeWorkflow(t.db, { name: 'check', cron: '*/5 * * * *' });
  tickAt = START;
});
afterEach(async () => t.drop());

/** The next five-minute tick fails (reported a minute later), then the engine steps. */
async function failNext(count = 1, status: 'failed' | 'missed' = 'failed') {
  for (let i = 0; i < count; i++) {
    tickAt = new Date(tickAt.getTime() + minutes(5));
    engine.clock.set(new Date(tickAt.getTime() + minutes(1)));
    if (status === 'failed') await reportRun(t.db, wf, tickAt, { status: 'failed', error: 'check failed: 17 rows missing' }, engine.clock.now());
    else await makeRun(t.db, { workflowId: wf.id, tick: tickAt, status: 'missed', attemptStatus: 'missed', error: 'missed', startedAt: null, finishedAt: engine.clock.now() });
    await engine.step();
  }
}

const alerts = () => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const eventKinds = async (alertId: number) => (await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', alertId).orderBy('id').execute()).map((e) => e.kind);

describe('a maintenance window', () => {
  it('holds failing ticks: recorded and marked, but nothing opens; after it, counting starts afresh', async () => {
    const window = await startMaintenance(engine.deps, { tenantId: 'acme', workflow: 'check', durationMs: minutes(30), reason: 'db upgrade', actor: 'U0OPS', scope: acme });
    expect(window).toMatchObject({ kind: 'ok', window: { reason: 'db upgrade' } });
    await failNext(5); // 02:05 … 02:25, all inside [02:00, 02:30)
    expect(await alerts()).toEqual([]);
    const runs = await t.db.selectFrom('runs').select(['tick', 'status', 'inMaintenance', 'processedAt']).where('workflowId', '=', wf.id).orderBy('tick').execute();
    expect(runs).toHaveLength(5);
    expect(runs.every((r) => r.status === 'failed' && r.inMaintenance && r.processedAt !== null)).toBe(true);

    await failNext(2); // 02:30 (its end is outside: half-open), 02:35
    expect(await alerts()).toEqual([]);
    await failNext(1);
    const [alert] = await alerts();
    expect(alert).toMatchObject({ status: 'open', consecutiveFailures: 3 });
  });

  it('keeps an open warning from counting, escalating or paging, and its end is told once in the thread across two replicas', async () => {
    await failNext(3);
    const [opened] = await alerts();
    expect(opened).toMatchObject({ severity: 'warning', consecutiveFailures: 3 });
    const deadline = opened!.escalateAt!;
    expect(deadline.getTime()).toBeGreaterThan(engine.clock.now().getTime());

    const startsAt = new Date(tickAt.getTime() + minutes(4)); // 02:19, before the 02:20 tick
    await startMaintenance(engine.deps, { tenantId: 'acme', workflow: 'check', durationMs: minutes(60), startsAt, reason: 'vacuum', actor: 'api:acme', scope: acme });
    await failNext(8);
    await failNext(2, 'missed');
    await failNext(2); // ticks 02:20 … 03:15, all inside [02:19, 03:19)
    expect(engine.clock.now().getTime()).toBeGreaterThan(deadline.getTime()); // well past the deadline
    const during = (await alerts())[0]!;
    expect(during).toMatchObject({ severity: 'warning', escalatedAt: null, consecutiveFailures: 3, lastRunId: opened!.lastRunId });
    expect(await eventKinds(opened!.id)).toEqual(['opened']);

    // The window ends; two replicas run their clocks at once.
    engine.clock.set(new Date(startsAt.getTime() + minutes(61)));
    const other = createEngine(t.db, START, {}, 'engine-b', engine.clock);
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps), runEscalationClock(engine.deps)]);
    const told = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', opened!.id).where('kind', '=', 'maintenance_ended').execute();
    expect(told).toHaveLength(1);
    expect(told[0]!.data).toEqual({ startedAt: startsAt.toISOString(), endedAt: new Date(startsAt.getTime() + minutes(60)).toISOString(), reason: 'vacuum', failures: 10, missed: 2, scope: 'workflow' });
    expect((await notificationStory(t.db, opened!.id)).filter((n) => n.kind === 'maintenance_ended').map((n) => n.destination).sort()).toEqual(['slack:CACME', 'slack:CPLATFORM']);

    // The escalation clock resumes where it stopped: the deadline moved by the hour the window held it.
    const after = (await alerts())[0]!;
    expect(after.severity).toBe('warning');
    expect(after.escalateAt!.getTime()).toBe(deadline.getTime() + minutes(60));
    engine.clock.set(new Date(after.escalateAt!.getTime() + 1000));
    await runEscalationClock(engine.deps);
    expect((await alerts())[0]!.severity).toBe('critical');
  });

  it("pages nobody inside it: an owned alert's reminder waits for the window's end, then is sent once", async () => {
    await failNext(3);
    const [opened] = await alerts();
    await takeOwnership(engine.deps, { alertId: opened!.id, actor: { user: 'U0BOB', channel: 'CACME' }, scope: acme });
    const ownedAt = engine.clock.now();
    await startMaintenance(engine.deps, { tenantId: 'acme', workflow: 'check', durationMs: minutes(90), reason: 'vacuum', actor: 'api:acme', scope: acme });
    // A five-minute job reminds its owner after 30 minutes: an hour into the window, none.
    engine.clock.set(new Date(ownedAt.getTime() + minutes(60)));
    await runEscalationClock(engine.deps);
    expect(await eventKinds(opened!.id)).not.toContain('reminder');
    engine.clock.set(new Date(ownedAt.getTime() + minutes(91)));
    await runEscalationClock(engine.deps);
    await runEscalationClock(engine.deps);
    expect((await eventKinds(opened!.id)).filter((k) => k === 'reminder')).toHaveLength(1);
  });

  it('a warning past its deadline is not escalated while its ended window is being told by another replica', async () => {
    await failNext(3);
    const [opened] = await alerts();
    const deadline = opened!.escalateAt!;
    const startsAt = new Date(tickAt.getTime() + minutes(2));
    const window = await startMaintenance(engine.deps, { tenantId: 'acme', workflow: 'check', durationMs: deadline.getTime() - startsAt.getTime() + minutes(30), startsAt, reason: 'vacuum', actor: 'api:acme', scope: acme });
    if (window.kind !== 'ok') throw new Error('no window');
    engine.clock.set(new Date(window.window.endsAt.getTime() + 1000));
    // Replica A has claimed the ended window (its row locked, told_at not yet committed) when replica B's clock runs.
    const holder = await createPool(t.url, 1).connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from maintenance_windows where id = $1 for update', [window.window.id]);
      await runEscalationClock(engine.deps);
      expect((await alerts())[0]).toMatchObject({ severity: 'warning', escalateAt: deadline });
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    await runEscalationClock(engine.deps);
    const after = (await alerts())[0]!;
    expect(after).toMatchObject({ severity: 'warning' });
    expect(after.escalateAt!.getTime()).toBeGreaterThan(engine.clock.now().getTime());
  });

  it('a one-off window set to start in the past moves the deadline only by the time it held the warning, from when it was set', async () => {
    await failNext(3);
    const [opened] = await alerts();
    const deadline = opened!.escalateAt!;
    engine.clock.set(new Date(opened!.openedAt.getTime() + minutes(60)));
    const startsAt = new Date(opened!.openedAt.getTime() + minutes(10));
    const window = await startMaintenance(engine.deps, { tenantId: 'acme', workflow: 'check', durationMs: minutes(80), startsAt, reason: 'set late', actor: 'api:acme', scope: acme });
    if (window.kind !== 'ok') throw new Error('no window');
    engine.clock.set(new Date(window.window.endsAt.getTime() + 1000));
    await runEscalationClock(engine.deps);
    // Held from when it was set (opened + 60 min) to its end (opened + 90 min): 30 min, not its 80.
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline.getTime() + minutes(30));
  });

  it('a pause overlapping a window moves the deadline by their union once, whichever ends first', async () => {
    await failNext(3);
    const [opened] = await alerts();
    const deadline = opened!.escalateAt!;
    const from = new Date(tickAt.getTime() + minutes(2));
    const at = (m: number) => new Date(from.getTime() + minutes(m));
    const byHand = { workflowId: wf.id, actor: 'U0OPS', scope: acme };
    // Window 0–60 min; paused 30–90 min (resumed after the window ended): held 90 min, not 120.
    await t.db.insertInto('maintenanceWindows').values({ tenantId: 'acme', workflowId: wf.id, startsAt: at(0), endsAt: at(60), reason: null, createdBy: 'U0OPS', createdAt: from }).execute();
    engine.clock.set(at(30));
    expect((await pauseWorkflow(engine.deps, byHand)).kind).toBe('ok');
    engine.clock.set(at(61));
    await runEscalationClock(engine.deps);
    engine.clock.set(at(90));
    expect((await resumeWorkflow(engine.deps, byHand)).kind).toBe('ok');
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline.getTime() + minutes(90));
    // Paused 120–150 min, a window 100–200 min (ends after the resume): 100 min more, not 130.
    await t.db.insertInto('maintenanceWindows').values({ tenantId: 'acme', workflowId: null, startsAt: at(100), endsAt: at(200), reason: null, createdBy: 'U0OPS', createdAt: from }).execute();
    engine.clock.set(at(120));
    expect((await pauseWorkflow(engine.deps, byHand)).kind).toBe('ok');
    engine.clock.set(at(150));
    expect((await resumeWorkflow(engine.deps, byHand)).kind).toBe('ok');
    engine.clock.set(at(201));
    await runEscalationClock(engine.deps);
    expect((await alerts())[0]).toMatchObject({ severity: 'warning', escalateAt: new Date(deadline.getTime() + minutes(190)) });
  });

  it('two overlapping windows (tenant-wide 60 min, then the workflow\'s own 60 min from half-way) move the deadline by their union, 90 min, once', async () => {
    await failNext(3);
    const [opened] = await alerts();
    const deadline = opened!.escalateAt!;
    const from = new Date(tickAt.getTime() + minutes(2));
    const window = (workflowId: number | null, startsAt: Date) => ({ tenantId: 'acme', workflowId, startsAt, endsAt: new Date(startsAt.getTime() + minutes(60)), reason: null, createdBy: 'U0OPS', createdAt: from });
    await t.db.insertInto('maintenanceWindows').values([window(null, from), window(wf.id, new Date(from.getTime() + minutes(30)))]).execute();

    engine.clock.set(new Date(from.getTime() + minutes(91)));
    await runEscalationClock(engine.deps);
    expect(await eventKinds(opened!.id)).toEqual(['opened', 'maintenance_ended', 'maintenance_ended']);
    expect((await alerts())[0]!.escalateAt!.getTime()).toBe(deadline.getTime() + minutes(90));
  });

  it('a tenant-wide recurring window (as the file stores it) holds the ticks inside it; each occurrence is recorded and told once', async () => {
    await failNext(3); // 02:05 … 02:15 UTC: opens
    const [opened] = await alerts();
    // 03:20 in Berlin is 02:20 UTC: the window is [02:20, 03:00) UTC.
    await t.db
      .updateTable('tenants')
      .set({ maintenance: JSON.stringify([{ cron: '20 3 * * *', timezone: 'Europe/Berlin', durationMs: minutes(40), reason: 'nightly backup' }]) })
      .where('id', '=', 'acme')
      .execute();
    await failNext(8); // 02:20 … 02:55
    expect((await alerts())[0]).toMatchObject({ consecutiveFailures: 3, severity: 'warning' });
    const occurrences = await t.db.selectFrom('maintenanceWindows').selectAll().execute();
    expect(occurrences).toHaveLength(1);
    expect(occurrences[0]).toMatchObject({ workflowId: null, startsAt: new Date('2026-03-10T02:20:00Z'), endsAt: new Date('2026-03-10T03:00:00Z'), reason: 'nightly backup', toldAt: null });

    engine.clock.set(new Date('2026-03-10T03:00:00Z'));
    const other = createEngine(t.db, START, {}, 'engine-b', engine.clock);
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    await runEscalationClock(other.deps);
    const told = await t.db.selectFrom('alertEvents').select('data').where('alertId', '=', opened!.id).where('kind', '=', 'maintenance_ended').execute();
    expect(told.map((e) => e.data)).toEqual([
      { startedAt: '2026-03-10T02:20:00.000Z', endedAt: '2026-03-10T03:00:00.000Z', reason: 'nightly backup', failures: 8, missed: 0, scope: 'tenant' },
    ]);
    expect(await t.db.selectFrom('maintenanceWindows').selectAll().execute()).toHaveLength(1);

    // The next tick (03:00) is outside again and counts.
    await failNext(1);
    expect((await alerts())[0]).toMatchObject({ consecutiveFailures: 4 });
  });
});
