import { beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import { eventText, plainEventText } from '../../src/notify/event-text.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { usePeopleRig } from '../helpers/people-rig.js';

/**
 * An owner who is gone (left, on holiday) does not keep an alert from the
 * on-call for ever: after `ownershipLapsesAfterReminders` (default 3)
 * reminders they left unanswered, the ownership lapses, escalation resumes,
 * and a critical alert pages the on-call (docs/alerts.md, escalation).
 */
const START = new Date('2026-03-10T00:00:00Z');

const people = usePeopleRig(START);
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(async () => {
  ({ t, engine, rig } = people);
  // A tenant whose ownerships expire after 2 h, whatever their owner does.
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', oncall: JSON.stringify({ users: ['U0ONCALL'] }), ownershipExpiresAfterSeconds: 2 * 3600 });
});

const workflow = (cron: string, policy: Record<string, unknown> = {}) => people.workflow(cron, { retries: 0, ...policy });

/** Fails ticks `every` apart, from the next whole hour after the clock, until an alert is open; returns it. */
async function openAlert(wf: Workflow, every: number) {
  let tick = new Date(Math.ceil((engine.clock.now().getTime() + 1) / 3_600_000) * 3_600_000);
  for (let i = 0; i < 5; i++, tick = new Date(tick.getTime() + every)) {
    engine.clock.set(new Date(tick.getTime() + minutes(1)));
    await fireTick(engine, wf, tick, { status: 'failed', error: 'connect ECONNREFUSED' });
    await engine.drain();
    const open = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirst();
    if (open) return open;
  }
  throw new Error('no alert opened');
}

const alertRow = (id: number) => t.db.selectFrom('alerts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventsOf = (id: number, kind: string) => t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', id).where('kind', '=', kind).orderBy('id').execute();

async function ack(wf: Workflow, user: string) {
  await rig.command(`ack ${wf.name}`, { channel: 'CACME', user });
  await eventually(async () => expect((await t.db.selectFrom('alerts').select('ownerUser').where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow()).ownerUser).toBe(user));
}

/** The escalation clock's pass at `ms` after `from`. */
async function passAt(from: Date, ms: number) {
  engine.clock.set(new Date(from.getTime() + ms));
  await runEscalationClock(engine.deps);
}

describe('an owner who does not answer', () => {
  it('a 5-minute job past its deadline: reminded at 30 min, 1 h and 2 h; at 4 h, with none answered, the lapse escalates it: one broadcast reply pages the on-call', async () => {
    const wf = await workflow('*/5 * * * *');
    const alert = await openAlert(wf, minutes(5));
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const m of [30, 60, 120]) await passAt(owned, minutes(m));
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(3);
    await passAt(owned, minutes(239));
    expect((await alertRow(alert.id)).ownerUser).toBe('U0LEAD');
    await rig.drain();
    const root = rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const before = rig.slack.replies('CACME', root.ts).length;

    // Unowned, it is past its deadline (30 min × 6 from the opening): the lapse and the escalation are one moment, one message.
    await passAt(owned, minutes(240));
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(3);
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, acknowledgedAt: null, severity: 'critical', escalatedAt: new Date(owned.getTime() + minutes(240)) });
    expect(await eventsOf(alert.id, 'ownership_expired')).toHaveLength(0);
    const [escalated] = await eventsOf(alert.id, 'escalated');
    expect(escalated!.data).toMatchObject({ reason: 'deadline', mention: { users: [], groups: ['SONCALL'] }, lapsed: { previousUser: 'U0LEAD', reason: 'unanswered', reminders: 3 } });
    await passAt(owned, minutes(241));
    expect(await eventsOf(alert.id, 'escalated')).toHaveLength(1);
    await rig.drain();
    const told = rig.slack.replies('CACME', root.ts).slice(before);
    expect(told).toHaveLength(1);
    expect(told[0]!.metadata?.event_payload.event).toBe('escalated');
    expect(told[0]!.text).toContain('ownership by <@U0LEAD> lapsed after 4h');
    expect(told[0]!.text).toContain('3 reminders went unanswered');
    expect(told[0]!.text).toContain('<!subteam^SONCALL>');
    const call = rig.slack.callsTo('chat.postMessage').find((c) => c.ts === told[0]!.ts)!;
    expect(String(call.args.reply_broadcast)).toBe('true');
  });

  it('a warning not yet due when the ownership lapses: the thread says so, and it escalates at its own deadline', async () => {
    // Deadline 100 × 5 min = 8 h 20 min after the opening; the lapse comes at 4 h.
    const wf = await workflow('*/5 * * * *', { escalationMultiplier: 100 });
    const alert = await openAlert(wf, minutes(5));
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const m of [30, 60, 120, 240]) await passAt(owned, minutes(m));
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, severity: 'warning' });
    const [lapsed] = await eventsOf(alert.id, 'ownership_expired');
    expect(lapsed!.data).toMatchObject({ previousUser: 'U0LEAD', reason: 'unanswered', reminders: 3 });
    expect(lapsed!.data).not.toHaveProperty('mention');
    expect(await eventsOf(alert.id, 'escalated')).toHaveLength(0);

    const deadline = (await alertRow(alert.id)).escalateAt!;
    engine.clock.set(new Date(deadline.getTime() - 1000));
    await runEscalationClock(engine.deps);
    expect(await eventsOf(alert.id, 'escalated')).toHaveLength(0);
    engine.clock.set(deadline);
    await runEscalationClock(engine.deps);
    const [escalated] = await eventsOf(alert.id, 'escalated');
    expect(escalated!.data).toMatchObject({ reason: 'deadline', mention: { groups: ['SONCALL'] } });
    expect(escalated!.data).not.toHaveProperty('lapsed');
    await rig.drain();
    const root = rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const replies = rig.slack.replies('CACME', root.ts);
    const told = replies.find((m) => m.metadata?.event_payload.event === 'ownership_expired')!;
    expect(told.text).toContain('3 reminders went unanswered');
    expect(told.text).toContain('escalation resumes');
    expect(String(rig.slack.callsTo('chat.postMessage').find((c) => c.ts === told.ts)!.args.reply_broadcast ?? false)).toBe('false');
    expect(replies.filter((m) => m.metadata?.event_payload.event === 'escalated')).toHaveLength(1);
  });

  it("the tenant's ownershipExpiresAfter on a warning kept failing while owned: the expiry and the escalation are one broadcast reply", async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'globex', name: 'globex-sync', cron: '*/5 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: './check' }), policy: JSON.stringify({ retries: 0, escalationMultiplier: 100 }) });
    const alert = await openAlert(wf, minutes(5));
    const owned = engine.clock.now();
    await t.db.updateTable('alerts').set({ ownerUser: 'U0GONE', acknowledgedBy: 'U0GONE', acknowledgedAt: owned }).where('id', '=', alert.id).execute();
    // Kept failing while owned: 6 consecutive failures (twice the 3 it took to open) make it due however far its deadline.
    await t.db.updateTable('alerts').set({ consecutiveFailures: 6 }).where('id', '=', alert.id).execute();
    await passAt(owned, minutes(30));
    await rig.drain();
    const root = rig.slack.roots('CGLOBEX').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const before = rig.slack.replies('CGLOBEX', root.ts).length;

    await passAt(owned, minutes(120));
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, severity: 'critical' });
    expect(await eventsOf(alert.id, 'ownership_expired')).toHaveLength(0);
    const [escalated] = await eventsOf(alert.id, 'escalated');
    expect(escalated!.data).toMatchObject({ reason: 'kept_failing', mention: { users: ['U0ONCALL'], groups: [] }, lapsed: { previousUser: 'U0GONE' } });
    await rig.drain();
    const told = rig.slack.replies('CGLOBEX', root.ts).slice(before);
    expect(told.map((m) => m.metadata?.event_payload.event)).toEqual(['escalated']);
    expect(told[0]!.text).toContain('ownership by <@U0GONE> expired after 2h');
    expect(told[0]!.text).toContain('Paging <@U0ONCALL>');
    expect(String(rig.slack.callsTo('chat.postMessage').find((c) => c.ts === told[0]!.ts)!.args.reply_broadcast)).toBe('true');
  });

  it("an overdue warning of a paused workflow: its ownership expires, and it escalates nobody (the pause stops the clock)", async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'globex', name: 'globex-paused', cron: '*/5 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: './check' }), policy: JSON.stringify({ retries: 0 }) });
    const alert = await openAlert(wf, minutes(5));
    const owned = engine.clock.now();
    await t.db.updateTable('alerts').set({ ownerUser: 'U0GONE', acknowledgedBy: 'U0GONE', acknowledgedAt: owned }).where('id', '=', alert.id).execute();
    await t.db.updateTable('workflows').set({ paused: true }).where('id', '=', wf.id).execute();
    await passAt(owned, minutes(120));
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, severity: 'warning' });
    const expired = await eventsOf(alert.id, 'ownership_expired');
    expect(expired).toHaveLength(1);
    expect(await eventsOf(alert.id, 'escalated')).toHaveLength(0);
    // Its reply does not promise an escalation the pause holds back.
    const text = plainEventText(eventText({ event: expired[0]!, alert: await alertRow(alert.id), workflow: wf }));
    expect(text).toContain('it escalates once the workflow is resumed');
    expect(text).not.toContain('escalation resumes');
  });

  it('an answer (an act of the owner on the alert, here Run now) starts the count again', async () => {
    const wf = await workflow('*/5 * * * *');
    const alert = await openAlert(wf, minutes(5));
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const m of [30, 60]) await passAt(owned, minutes(m));
    engine.clock.set(new Date(owned.getTime() + minutes(90)));
    await rig.command(`run ${wf.name}`, { channel: 'CACME', user: 'U0LEAD' });
    await eventually(async () => expect((await t.db.selectFrom('alertEvents').select('actor').where('alertId', '=', alert.id).where('actor', '=', 'U0LEAD').execute()).length).toBeGreaterThan(1));
    for (const m of [120, 240]) await passAt(owned, minutes(m));
    // Reminders at 2 h and 4 h are the first and second since the answer: still owned.
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(4);
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: 'U0LEAD' });
    await passAt(owned, minutes(480));
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(5);
    await passAt(owned, minutes(1440));
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null });
  });

  it("the owner's Take ownership on a reminder answers it in place, starts the count and the period over; /scheduler ack does too", async () => {
    const wf = await workflow('*/5 * * * *');
    const alert = await openAlert(wf, minutes(5));
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const m of [30, 60, 120]) await passAt(owned, minutes(m));
    await rig.drain();
    const root = rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const reminders = rig.slack.replies('CACME', root.ts).filter((m) => m.metadata?.event_payload.event === 'reminder');
    expect(reminders).toHaveLength(3);
    const last = reminders.at(-1)!;
    expect(last.text).toContain('To keep it, press Take ownership');
    expect(last.text).toContain('after 3 unanswered reminders it goes back to the on-call');
    const actions = (last.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!;
    const button = actions.elements!.find((e) => e.action_id === ACTION.keepOwnership)!;

    engine.clock.set(new Date(owned.getTime() + minutes(150)));
    const before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.keepOwnership, value: button.value, channel: 'CACME', user: 'U0LEAD', messageTs: last.ts });
    await eventually(() => {
      const answer = rig.slack.responses.slice(before).find((r) => r.body.replace_original === true);
      expect(JSON.stringify(answer!.body.blocks)).toContain('still on it');
      expect(JSON.stringify(answer!.body.blocks)).not.toContain(ACTION.keepOwnership);
    });
    const [confirmed] = await eventsOf(alert.id, 'owner_confirmed');
    expect(confirmed).toMatchObject({ actor: 'U0LEAD', data: { ownerUser: 'U0LEAD' } });
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: 'U0LEAD', acknowledgedAt: owned, remindedAt: new Date(owned.getTime() + minutes(150)) });

    // Without the answer, 4 h was the lapse. Now the period counts from the answer (as long as the ownership had lasted: 2.5 h).
    await passAt(owned, minutes(240));
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: 'U0LEAD' });
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(3);
    await passAt(owned, minutes(300));
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(4);

    await rig.command(`ack ${wf.name}`, { channel: 'CACME', user: 'U0LEAD' });
    await eventually(async () => expect(await eventsOf(alert.id, 'owner_confirmed')).toHaveLength(2));
    await rig.drain();
    const told = rig.slack.replies('CACME', root.ts).filter((m) => m.metadata?.event_payload.event === 'owner_confirmed');
    expect(told.map((m) => m.text)).toEqual([expect.stringContaining('<@U0LEAD> is still on it'), expect.stringContaining('<@U0LEAD> is still on it')]);

    // Again at once, with no reminder since (a double click, a retried request): nothing to answer, nothing recorded or posted.
    const answered = rig.slack.responses.length;
    await rig.command(`ack ${wf.name}`, { channel: 'CACME', user: 'U0LEAD' });
    await eventually(() => expect(String(rig.slack.responses[answered]?.body.text)).toContain('nothing changed'));
    expect(await eventsOf(alert.id, 'owner_confirmed')).toHaveLength(2);
  });

  it('a daily job (critical): the lapse after 3 days of unanswered reminders pages the on-call, broadcast', async () => {
    const wf = await workflow('0 2 * * *');
    const alert = await openAlert(wf, 86_400_000);
    expect(alert.severity).toBe('critical');
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const d of [1, 2, 3]) await passAt(owned, d * 86_400_000);
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(3);
    await passAt(owned, 4 * 86_400_000);
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, severity: 'critical' });
    const [lapsed] = await eventsOf(alert.id, 'ownership_expired');
    expect(lapsed!.data).toMatchObject({ reason: 'unanswered', reminders: 3, mention: { users: [], groups: ['SONCALL'] } });
    await rig.drain();
    const root = rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const told = rig.slack.replies('CACME', root.ts).find((m) => m.metadata?.event_payload.event === 'ownership_expired')!;
    expect(told.text).toContain('<!subteam^SONCALL>');
    const call = rig.slack.callsTo('chat.postMessage').find((c) => c.ts === told.ts)!;
    expect(String(call.args.reply_broadcast)).toBe('true');
  });

  it('ownershipLapsesAfterReminders: 0 keeps the old way: reminders, never a lapse', async () => {
    const wf = await workflow('*/5 * * * *', { ownershipLapsesAfterReminders: 0 });
    const alert = await openAlert(wf, minutes(5));
    await ack(wf, 'U0LEAD');
    const owned = (await alertRow(alert.id)).acknowledgedAt!;
    for (const m of [30, 60, 120, 240, 480, 960, 1920]) await passAt(owned, minutes(m));
    expect(await eventsOf(alert.id, 'reminder')).toHaveLength(7);
    expect(await eventsOf(alert.id, 'ownership_expired')).toHaveLength(0);
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: 'U0LEAD' });
  });
});
