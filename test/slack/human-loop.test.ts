import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, PLATFORM, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/** The people around an alert (issues 12 and 13), through the signed-request rig and the real engine. */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  rig = await startSlackRig(t.db, { clock: engine.clock, launchers: engine.launcher.resolver, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', oncall: JSON.stringify({ group: 'SONCALL' }), rights: JSON.stringify({ admins: ['U0LEAD'] }) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

let seq = 0;
async function hourlyWorkflow(tenantId = 'acme'): Promise<Workflow> {
  return makeWorkflow(t.db, {
    tenantId,
    name: `hourly-${++seq}`,
    cron: '0 * * * *',
    mode: 'managed',
    launcher: JSON.stringify({ kind: 'command', command: './export' }),
    policy: JSON.stringify({ retries: 0, recoverAfter: 1 }),
  });
}

async function failTick(wf: Workflow, n: number) {
  engine.clock.set(new Date(Math.max(hour(n).getTime() + minutes(2), engine.clock.now().getTime())));
  await fireTick(engine, wf, hour(n), { status: 'failed', error: 'connect ECONNREFUSED', stage: 'upload' });
  await engine.drain();
  await rig.drain();
}

const openAlertOf = (wf: Workflow) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow();
const alertsOf = (wf: Workflow) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const rootOf = (alertId: number, channel = 'CACME') =>
  rig.slack.roots(channel).find((m) => m.metadata?.event_payload.alert_id === alertId) ?? (() => { throw new Error(`no root for alert ${alertId}`); })();
const repliesOf = (alertId: number, channel = 'CACME') => rig.slack.replies(channel, rootOf(alertId, channel).ts);
/** The first private answer after `before` (in-place replacements of the clicked message are skipped). */
const lastResponseText = async (before: number) =>
  eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral');
    if (!r) throw new Error('no response yet');
    return String(r.body.text);
  });

describe('escalation pages a person', () => {
  it('an unowned warning escalating to critical is a broadcast reply mentioning the on-call group', async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    engine.clock.set(new Date(alert.escalateAt!.getTime() + minutes(1)));
    await runEscalationClock(engine.deps);
    await rig.drain();

    const reply = repliesOf(alert.id).find((m) => m.metadata?.event_payload.event === 'escalated')!;
    expect(reply.text).toContain('<!subteam^SONCALL>');
    const call = rig.slack.callsTo('chat.postMessage').find((c) => c.ts === reply.ts)!;
    expect(String(call.args.reply_broadcast)).toBe('true');
    // Other replies stay in the thread.
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    await eventually(async () => expect((await openAlertOf(wf)).ownerUser).toBe('U0ALICE'));
    await rig.drain();
    const others = rig.slack.callsTo('chat.postMessage').filter((c) => c.threadTs && c.metadata?.event_payload.alert_id === alert.id && c.metadata.event_payload.event !== 'escalated');
    expect(others.length).toBeGreaterThan(0);
    for (const c of others) expect(c.args.reply_broadcast).toBeUndefined();
  });

  it('an alert with an owner who has not acknowledged it mentions the owner, not the on-call', async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    await t.db.updateTable('alerts').set({ ownerUser: 'U0OWNER' }).where('id', '=', alert.id).execute();
    engine.clock.set(new Date(alert.escalateAt!.getTime() + minutes(1)));
    await runEscalationClock(engine.deps);
    await rig.drain();
    const reply = repliesOf(alert.id).find((m) => m.metadata?.event_payload.event === 'escalated')!;
    expect(reply.text).toContain('<@U0OWNER>');
    expect(reply.text).not.toContain('SONCALL');
  });
});

describe('shadow pages nobody', () => {
  it('a shadow workflow escalating tells the platform channel, marked shadow, without mentioning the on-call or broadcasting', async () => {
    const wf = await hourlyWorkflow();
    await t.db.updateTable('workflows').set({ shadow: true }).where('id', '=', wf.id).execute();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    engine.clock.set(new Date(Math.max(alert.escalateAt!.getTime(), engine.clock.now().getTime()) + minutes(1)));
    await runEscalationClock(engine.deps);
    await rig.drain();

    expect((await openAlertOf(wf)).severity).toBe('critical');
    expect(rig.slack.roots('CACME').some((m) => m.metadata?.event_payload.alert_id === alert.id)).toBe(false);
    const reply = repliesOf(alert.id, PLATFORM).find((m) => m.metadata?.event_payload.event === 'escalated')!;
    expect(reply).toBeDefined();
    expect(reply.text).not.toContain('SONCALL');
    expect(reply.text).not.toMatch(/<!subteam|<@U|<!channel|<!here/);
    const call = rig.slack.callsTo('chat.postMessage').find((c) => c.ts === reply.ts)!;
    expect(call.args.reply_broadcast).toBeUndefined();
  });
});

describe('reminders', () => {
  it('an owned alert still failing reminds its owner once per period, however many replicas run the clock', async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    await eventually(async () => expect((await openAlertOf(wf)).ownerUser).toBe('U0ALICE'));
    const owned = (await openAlertOf(wf)).acknowledgedAt!;
    const other = createEngine(t.db, START, {}, 'engine-b', engine.clock);
    const reminders = async () => (await t.db.selectFrom('alertEvents').select('id').where('alertId', '=', alert.id).where('kind', '=', 'reminder').execute()).length;

    // Hourly cadence: the default period is two hours.
    engine.clock.set(new Date(owned.getTime() + minutes(119)));
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    expect(await reminders()).toBe(0);
    engine.clock.set(new Date(owned.getTime() + minutes(121)));
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps), runEscalationClock(engine.deps)]);
    expect(await reminders()).toBe(1);
    engine.clock.advance(minutes(60));
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    expect(await reminders()).toBe(1);
    engine.clock.advance(minutes(61));
    await Promise.all([runEscalationClock(engine.deps), runEscalationClock(other.deps)]);
    expect(await reminders()).toBe(2);

    await rig.drain();
    const told = repliesOf(alert.id).filter((m) => m.metadata?.event_payload.event === 'reminder');
    expect(told).toHaveLength(2);
    expect(told[0]!.text).toContain('<@U0ALICE>');
  });
});

describe('resolve by hand', () => {
  it('closes the alert with who and why; failures after it open a new alert in a new thread, counted from the resolve', async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);

    let before = rig.slack.responses.length;
    await rig.command(`resolve ${wf.name}`, { channel: 'CACME', user: 'U0LEAD' });
    expect(await lastResponseText(before)).toContain('a note is required');

    before = rig.slack.responses.length;
    await rig.command(`resolve ${wf.name} vendor restored the database`, { channel: 'CACME', user: 'U0BOB' });
    const refused = await lastResponseText(before);
    expect(refused).toContain("Only Acme's admins can resolve by hand");
    expect(refused).toContain('<@U0LEAD>');
    expect((await openAlertOf(wf)).status).toBe('open');

    before = rig.slack.responses.length;
    await rig.command(`resolve ${wf.name} vendor restored the database`, { channel: 'CACME', user: 'U0LEAD' });
    expect(await lastResponseText(before)).toContain('Resolved the alert');
    await eventually(async () => expect((await alertsOf(wf))[0]!.status).toBe('resolved'));
    const event = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', alert.id).where('kind', '=', 'resolved').executeTakeFirstOrThrow();
    expect(event.actor).toBe('U0LEAD');
    expect(event.data).toMatchObject({ by: 'hand', note: 'vendor restored the database' });
    await rig.drain();
    const rootsBefore = rig.slack.roots('CACME').length;
    const told = repliesOf(alert.id).find((m) => m.metadata?.event_payload.event === 'resolved')!;
    expect(told.text).toContain('<@U0LEAD> resolved the alert by hand');
    expect(told.text).toContain('vendor restored the database');

    // As after a recovery: an hourly job alerts at its second failure, counted from the resolve (the ticks after it).
    const next = Math.floor((engine.clock.now().getTime() - START.getTime()) / 3_600_000) + 1;
    await failTick(wf, next);
    expect((await alertsOf(wf)).map((a) => a.status)).toEqual(['resolved']);
    await failTick(wf, next + 1);
    const alerts = await alertsOf(wf);
    expect(alerts.map((a) => a.status)).toEqual(['resolved', 'open']);
    expect(alerts[1]!.consecutiveFailures).toBe(2);
    expect(rig.slack.roots('CACME')).toHaveLength(rootsBefore + 1);
    expect(rootOf(alerts[1]!.id).ts).not.toBe(rootOf(alert.id).ts);
  });
});

describe('immediate answers', () => {
  it("a click's own message shows the new state at once; the outbox still posts the thread reply exactly once", async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    const before = rig.slack.responses.length;
    const sentBefore = rig.slack.callsTo('chat.postMessage').length;
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    const answer = await eventually(() => {
      const r = rig.slack.responses.slice(before).find((x) => x.body.replace_original === true);
      if (!r) throw new Error('no in-place answer yet');
      return r;
    });
    // Rendered from the committed state by the click's handler, not by the paced outbox (nothing was posted meanwhile).
    expect(JSON.stringify(answer.body.blocks)).toContain('Release');
    expect(JSON.stringify(answer.body.blocks)).toContain('<@U0ALICE>');
    expect(rig.slack.callsTo('chat.postMessage').length).toBe(sentBefore);
    await rig.drain();
    await rig.drain();
    const taken = repliesOf(alert.id).filter((m) => m.metadata?.event_payload.event === 'owner_changed');
    expect(taken).toHaveLength(1);
  });

  it('an in-place answer landing after the refresher showed a newer state is followed by the newest state again', async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    const root = rootOf(alert.id);
    const updates = () => rig.slack.callsTo('chat.update').filter((c) => c.ts === root.ts);

    const release = rig.slack.holdResponses();
    const answered = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE', messageTs: root.ts });
    // The ownership is committed; its in-place answer (rendered from that state) is on its way, held.
    await eventually(async () => expect((await openAlertOf(wf)).ownerUser).toBe('U0ALICE'));
    // Meanwhile a third failure: the refresher shows the newer count on the root before the answer lands.
    await failTick(wf, 3);
    expect(JSON.stringify(updates().at(-1)?.blocks)).toContain('3 failures');

    release();
    await eventually(() => expect(rig.slack.responses.slice(answered).some((r) => r.body.replace_original === true)).toBe(true));
    const atAnswer = updates().length;
    // The late answer showed the state before the third failure: the refresher renders the newest again.
    const again = await eventually(async () => {
      await rig.drain();
      return updates().slice(atAnswer).at(-1) ?? Promise.reject(new Error('root not rendered again'));
    });
    expect(JSON.stringify(again.blocks)).toContain('3 failures');
    expect(JSON.stringify(again.blocks)).toContain('<@U0ALICE>');
  });
});

describe('rights in Slack', () => {
  it("releasing someone else's ownership needs an admin, and the refusal names whom to ask", async () => {
    const wf = await hourlyWorkflow();
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await openAlertOf(wf);
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    await eventually(async () => expect((await openAlertOf(wf)).ownerUser).toBe('U0ALICE'));

    const before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.release, value: String(alert.id), channel: 'CACME', user: 'U0BOB' });
    const text = await lastResponseText(before);
    expect(text).toContain("Only Acme's admins can release someone else's ownership");
    expect(text).toContain('<@U0LEAD>');
    expect((await openAlertOf(wf)).ownerUser).toBe('U0ALICE');

    await rig.click({ actionId: ACTION.release, value: String(alert.id), channel: 'CACME', user: 'U0LEAD' });
    await eventually(async () => expect((await openAlertOf(wf)).ownerUser).toBeNull());
  });

  it('the App Home shows a person only the tenants whose channel they are in; never a destination URL', async () => {
    const acmeWf = await hourlyWorkflow('acme');
    const globexWf = await hourlyWorkflow('globex');
    for (const wf of [acmeWf, globexWf]) {
      await failTick(wf, 1);
      await failTick(wf, 2);
    }
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    rig.slack.channelMembers.set('CGLOBEX', ['U0GLOBEX']);
    rig.slack.channelMembers.set(PLATFORM, ['U0OPS']);
    for (const user of ['U0ALICE', 'U0OPS', 'U0NOBODY']) await rig.event({ type: 'app_home_opened', user, channel: `D${user}`, tab: 'home' });
    const home = (user: string) => eventually(() => JSON.stringify(rig.slack.homeViews.get(user) ?? (() => { throw new Error('not yet'); })()));
    const alice = await home('U0ALICE');
    expect(alice).toContain(acmeWf.name);
    expect(alice).not.toContain(globexWf.name);
    expect(alice).not.toContain('Globex');
    const ops = await home('U0OPS');
    expect(ops).toContain(acmeWf.name);
    expect(ops).toContain(globexWf.name);
    const nobody = await home('U0NOBODY');
    expect(nobody).not.toContain(acmeWf.name);
    expect(nobody).not.toContain(globexWf.name);
  });

  it("an alert in shadow is on the App Home of the platform channel's members only, not of the tenant's people", async () => {
    // The earlier tests' alerts are closed, so the Home lists this test's two alone.
    await t.db.updateTable('alerts').set({ status: 'resolved', resolvedAt: engine.clock.now() }).where('status', '=', 'open').execute();
    const liveWf = await hourlyWorkflow('acme');
    const shadowWf = await makeWorkflow(t.db, { tenantId: 'acme', name: `audit-only-${++seq}`, cron: '0 * * * *', shadow: true, policy: JSON.stringify({ retries: 0 }) });
    for (const wf of [liveWf, shadowWf]) {
      await failTick(wf, 1);
      await failTick(wf, 2);
    }
    expect((await openAlertOf(shadowWf)).status).toBe('open');
    // A delivery to the platform's own channel that died: its failure is the platform's, not shown to a tenant's people.
    const live = await openAlertOf(liveWf);
    await t.db.updateTable('notifications').set({ status: 'dead', lastError: 'platform sink refused: ops-only detail' }).where('alertId', '=', live.id).where('destination', '=', `slack:${PLATFORM}`).execute();
    // As in the test before (the bot's directory keeps what Slack answered): Alice is in Acme's channel, Ops in the platform channel.
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    rig.slack.channelMembers.set(PLATFORM, ['U0OPS']);
    for (const user of ['U0ALICE', 'U0OPS']) {
      rig.slack.homeViews.delete(user);
      await rig.event({ type: 'app_home_opened', user, channel: `D${user}`, tab: 'home' });
    }
    const home = (user: string) => eventually(() => JSON.stringify(rig.slack.homeViews.get(user) ?? (() => { throw new Error('not yet'); })()));
    const alice = await home('U0ALICE');
    expect(alice).toContain(liveWf.name);
    expect(alice).not.toContain(shadowWf.name);
    expect(alice).not.toContain('ops-only detail');
    const ops = await home('U0OPS');
    expect(ops).toContain(liveWf.name);
    expect(ops).toContain(shadowWf.name);
    expect(ops).toContain('ops-only detail');
  });
});
