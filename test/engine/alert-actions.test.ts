import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { InvalidActionInput, reassign, releaseOwnership, silence, takeOwnership, unsilence } from '../../src/ledger/alert-actions.js';
import { getAlertView, listOpenAlerts } from '../../src/ledger/alert-queries.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

const START = new Date('2026-03-10T02:00:00Z');

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;
let tickAt: Date;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  wf = await makeWorkflow(t.db, { name: 'check', cron: '*/5 * * * *', launcher: JSON.stringify({ kind: 'command', command: 'true' }), mode: 'managed' });
  tickAt = START;
});
afterEach(async () => t.drop());

/** The next five-minute tick fails (reported at tick + 1 min), then the escalation clock runs. */
async function failNext(count = 1) {
  for (let i = 0; i < count; i++) {
    tickAt = new Date(tickAt.getTime() + minutes(5));
    engine.clock.set(new Date(tickAt.getTime() + minutes(1)));
    await reportRun(t.db, wf, tickAt, { status: 'failed', error: 'check failed: 17 rows missing' }, engine.clock.now());
    await engine.step();
  }
}

async function openWarning() {
  await failNext(3);
  const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
  expect(alert.severity).toBe('warning');
  return alert;
}

const me = { user: 'U0ME' };
const acme = { tenantId: 'acme' };

describe('ownership', () => {
  it('taking ownership acknowledges the alert and stops escalation, even as failures continue past every threshold', async () => {
    const alert = await openWarning();
    const taken = await takeOwnership(engine.deps, { alertId: alert.id, actor: me, scope: acme });
    expect(taken).toMatchObject({ kind: 'ok', alert: { ownerUser: 'U0ME', acknowledgedBy: 'U0ME' } });
    await failNext(10); // past 2 × alertAfter and past the 30-minute deadline
    const after = await t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ severity: 'warning', escalatedAt: null, consecutiveFailures: 13 });

    // Released: the clock sees it again, and it escalates at once (the deadline has passed).
    await releaseOwnership(engine.deps, { alertId: alert.id, actor: me, scope: acme });
    await failNext(1);
    expect((await t.db.selectFrom('alerts').select('severity').where('id', '=', alert.id).executeTakeFirstOrThrow()).severity).toBe('critical');
  });

  it('a second person gets already_owned; another tenant gets not_found; a resolved alert is not_open', async () => {
    const alert = await openWarning();
    await takeOwnership(engine.deps, { alertId: alert.id, actor: me, scope: acme });
    expect(await takeOwnership(engine.deps, { alertId: alert.id, actor: { user: 'U0YOU' }, scope: acme })).toMatchObject({ kind: 'already_owned', by: 'U0ME' });
    expect(await takeOwnership(engine.deps, { alertId: alert.id, actor: { user: 'U0YOU' }, scope: { tenantId: 'globex' } })).toEqual({ kind: 'not_found' });
    expect(await silence(engine.deps, { alertId: alert.id, actor: me, scope: { tenantId: 'globex' }, until: 'resolved' })).toEqual({ kind: 'not_found' });
    expect(await listOpenAlerts(t.db, { tenantId: 'globex' })).toEqual([]);
    expect((await listOpenAlerts(t.db, {})).map((r) => r.alert.id)).toEqual([alert.id]);

    tickAt = new Date(tickAt.getTime() + minutes(5));
    await reportRun(t.db, wf, tickAt, { status: 'succeeded' }, tickAt);
    await engine.drain();
    expect(await takeOwnership(engine.deps, { alertId: alert.id, actor: me, scope: {} })).toMatchObject({ kind: 'not_open' });
  });

  it('reassigning to the customer needs a note; the handoff is an owner_changed event with from/to/note', async () => {
    const alert = await openWarning();
    expect(await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'customer', note: '  ' })).toMatchObject({ kind: 'invalid' });
    const done = await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'customer', user: 'U0CUST', note: 'their warehouse credentials expired' });
    expect(done).toMatchObject({ kind: 'ok', alert: { ownerTeam: 'customer', ownerUser: 'U0CUST' } });
    const view = await getAlertView(t.db, alert.id);
    const handoff = view!.events.find((e) => e.kind === 'owner_changed')!;
    expect(handoff.data).toEqual({ fromTeam: 'engineering', fromUser: null, toTeam: 'customer', toUser: 'U0CUST', note: 'their warehouse credentials expired', acknowledged: true });
    expect(handoff.actor).toBe('U0ME');
    const rows = await t.db.selectFrom('notifications').select(['destination', 'idempotencyKey']).where('eventId', '=', handoff.id).execute();
    expect(rows.map((r) => r.destination).sort()).toEqual(['slack:CACME', 'slack:CPLATFORM']);
    expect(rows.map((r) => r.idempotencyKey)).toContain(`alert:${alert.id}:event:${handoff.id}:slack:CACME`);
  });
});

describe('a reassign that changes nothing', () => {
  it('same team, person and note (notes compared trimmed) is unchanged: no event, no notification, acknowledged time kept', async () => {
    const alert = await openWarning();
    const first = await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'engineering', user: 'U0BOB', note: 'vendor ticket 42' });
    expect(first).toMatchObject({ kind: 'ok' });
    const events = () => t.db.selectFrom('alertEvents').select('id').where('alertId', '=', alert.id).where('kind', '=', 'owner_changed').execute();
    expect(await events()).toHaveLength(1);
    const notifications = await t.db.selectFrom('notifications').select('id').where('alertId', '=', alert.id).execute();
    engine.clock.advance(minutes(1));

    const again = await reassign(engine.deps, { alertId: alert.id, actor: { user: 'U0YOU' }, scope: acme, team: 'engineering', user: ' U0BOB ', note: ' vendor ticket 42 ' });
    expect(again).toMatchObject({ kind: 'unchanged', alert: { ownerTeam: 'engineering', ownerUser: 'U0BOB', ownerNote: 'vendor ticket 42' } });
    expect(await events()).toHaveLength(1);
    expect(await t.db.selectFrom('notifications').select('id').where('alertId', '=', alert.id).execute()).toEqual(notifications);
    const row = await t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(row.acknowledgedBy).toBe('U0ME');
    expect(row.acknowledgedAt).toEqual((first as { alert: { acknowledgedAt: Date } }).alert.acknowledgedAt);

    // Any one of the three differing is a change.
    expect(await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'engineering', user: 'U0BOB', note: null })).toMatchObject({ kind: 'ok' });
    expect(await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'engineering', user: null, note: null })).toMatchObject({ kind: 'ok' });
    expect(await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'engineering', user: null, note: null })).toMatchObject({ kind: 'unchanged' });
    expect(await reassign(engine.deps, { alertId: alert.id, actor: me, scope: acme, team: 'customer', user: null, note: 'yours' })).toMatchObject({ kind: 'ok' });
    expect(await events()).toHaveLength(4);
  });
});

describe('silence', () => {
  it('a silenced alert escalates silently; its notifications arrive as one summary when the silence ends', async () => {
    const alert = await openWarning();
    await silence(engine.deps, { alertId: alert.id, actor: me, scope: acme, until: new Date(engine.clock.now().getTime() + 3_600_000), reason: 'deploying a fix' });
    await failNext(6);
    const during = await t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(during.severity).toBe('critical');
    const held = await t.db.selectFrom('notifications').select('status').where('alertId', '=', alert.id).where('status', '=', 'held').execute();
    expect(held.length).toBe(2 * 7); // 6 failure_recorded + 1 escalated, two destinations

    // The hour passes; the escalation clock ends the silence.
    engine.clock.advance(3_600_000);
    await engine.step();
    const rows = await t.db
      .selectFrom('notifications')
      .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
      .select(['alertEvents.kind', 'notifications.status', 'alertEvents.data'])
      .where('notifications.alertId', '=', alert.id)
      .orderBy('notifications.id')
      .execute();
    expect(rows.filter((r) => r.status === 'held')).toEqual([]);
    expect(rows.filter((r) => r.status === 'skipped')).toHaveLength(14);
    const pending = rows.filter((r) => r.status === 'pending').map((r) => r.kind);
    // The silence ends on a critical alert nobody owns, still failing: the on-call is paged again in each channel.
    expect(pending).toEqual(['opened', 'opened', 'silenced', 'silenced', 'unsilenced', 'unsilenced', 'reminder', 'reminder']);
    const summary = rows.find((r) => r.kind === 'unsilenced')!.data as { why: string; summary: unknown };
    expect(summary.why).toBe('expired');
    expect(summary.summary).toEqual({
      counts: [
        { kind: 'escalated', count: 1 },
        { kind: 'failure_recorded', count: 6 },
      ],
      escalated: true,
      consecutiveFailures: 9,
      severity: 'critical',
    });
  });

  it('silenced until resolved: unsilence by hand summarises; the recovery is always delivered', async () => {
    const alert = await openWarning();
    await expect(silence(engine.deps, { alertId: alert.id, actor: me, scope: acme, until: new Date(0) })).rejects.toBeInstanceOf(InvalidActionInput);
    await silence(engine.deps, { alertId: alert.id, actor: me, scope: acme, until: 'resolved' });
    await failNext(1);
    const un = await unsilence(engine.deps, { alertId: alert.id, actor: me, scope: acme });
    expect(un).toMatchObject({ kind: 'ok', alert: { silencedBy: null } });
    await silence(engine.deps, { alertId: alert.id, actor: me, scope: acme, until: 'resolved' });
    await failNext(1);
    tickAt = new Date(tickAt.getTime() + minutes(5));
    await reportRun(t.db, wf, tickAt, { status: 'succeeded' }, tickAt);
    engine.clock.set(new Date(tickAt.getTime() + 1000));
    await engine.drain();
    const resolved = await t.db
      .selectFrom('notifications')
      .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
      .select(['notifications.status', 'alertEvents.data'])
      .where('alertEvents.kind', '=', 'resolved')
      .execute();
    expect(resolved.map((r) => r.status)).toEqual(['pending', 'pending']);
    expect(resolved[0]!.data).toMatchObject({ heldWhileSilenced: { counts: [{ kind: 'failure_recorded', count: 1 }], escalated: false } });
    expect(await t.db.selectFrom('notifications').select('id').where('status', '=', 'held').execute()).toEqual([]);
  });
});

describe('run now', () => {
  it('records who asked on the open alert, refuses a second click while it runs, and says when there is no launcher', async () => {
    const alert = await openWarning();
    engine.launcher.script(wf.id, 'hold');
    const started = await requestRunNow(engine.deps, { workflowId: wf.id, actor: me, scope: acme });
    expect(started.kind).toBe('started');
    if (started.kind !== 'started') return;
    expect(started.run).toMatchObject({ trigger: 'manual', tick: null, requestedBy: 'U0ME', status: 'running' });
    expect(await requestRunNow(engine.deps, { workflowId: wf.id, actor: me, scope: acme })).toMatchObject({ kind: 'already_running', run: { id: started.run.id } });
    expect(await requestRunNow(engine.deps, { workflowId: wf.id, actor: me, scope: { tenantId: 'globex' } })).toEqual({ kind: 'not_found' });
    const requested = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', alert.id).where('kind', '=', 'run_requested').executeTakeFirstOrThrow();
    expect(requested.data).toEqual({ runId: started.run.id, by: 'U0ME' });

    const observed = await makeWorkflow(t.db, { name: 'observed', cron: '0 * * * *' });
    expect(await requestRunNow(engine.deps, { workflowId: observed.id, actor: me, scope: acme })).toMatchObject({ kind: 'no_launcher' });
  });
});
