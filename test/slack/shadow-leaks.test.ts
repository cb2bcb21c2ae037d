import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { ACTION, stormBlockId } from '../../src/slack/blocks/ids.js';
import { SHADOW_HERE_TEXT } from '../../src/slack/listeners/alert-here.js';
import { homeModel } from '../../src/slack/views/queries.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * Shadow mode (docs/policies.md): an alert in shadow is told only to the audit destination, so nothing a
 * tenant's people read or hear (their channel's commands, a ping) says anything of it.
 */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  rig = await startSlackRig(t.db, { clock: engine.clock, launchers: engine.launcher.resolver, env: { PLATFORM_CHANNEL: PLATFORM, ADMIN_USERS: 'U0BOSS' } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', oncall: JSON.stringify({ group: 'SONCALL' }) });
  rig.slack.channelMembers.set('CACME', ['U0ALICE', 'U0OPS']);
  rig.slack.channelMembers.set(PLATFORM, ['U0OPS']);
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

let seq = 0;
async function hourly(shadow: boolean): Promise<Workflow> {
  return makeWorkflow(t.db, { tenantId: 'acme', name: `${shadow ? 'audit' : 'live'}-${++seq}`, cron: '0 * * * *', shadow, policy: JSON.stringify({ retries: 0, recoverAfter: 1 }) });
}

async function failTwice(wf: Workflow) {
  for (const n of [1, 2]) {
    engine.clock.set(new Date(Math.max(hour(n).getTime() + minutes(2), engine.clock.now().getTime())));
    await fireTick(engine, wf, hour(n), { status: 'failed', error: 'connect ECONNREFUSED' });
    await engine.drain();
  }
  await rig.drain();
}

const openAlertOf = (wf: Workflow) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow();

/** The answer to one `/scheduler` command: private, or in the channel for a change no thread the channel sees tells. */
async function ask(text: string, channel: string, user: string): Promise<string> {
  const before = rig.slack.responses.length;
  expect((await rig.command(text, { channel, user })).status).toBe(200);
  return eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral' || x.body.response_type === 'in_channel');
    if (!r) throw new Error('no answer yet');
    return JSON.stringify(r.body);
  });
}

describe("/scheduler in a tenant's channel", () => {
  it("shows an alert in shadow only to the platform channel's members and admins, as the App Home does", async () => {
    const live = await hourly(false);
    const shadow = await hourly(true);
    await failTwice(live);
    await failTwice(shadow);
    const liveAlert = await openAlertOf(live);
    const shadowAlert = await openAlertOf(shadow);
    await t.db.updateTable('alerts').set({ ownerUser: 'U0ALICE' }).where('id', 'in', [liveAlert.id, shadowAlert.id]).execute();

    const status = await ask('status', 'CACME', 'U0ALICE');
    expect(status).toContain(`alert #${liveAlert.id}`);
    expect(status).toContain(shadow.name);
    expect(status).not.toContain(`alert #${shadowAlert.id}`);
    const detail = await ask(`status ${shadow.name}`, 'CACME', 'U0ALICE');
    expect(detail).not.toContain(`#${shadowAlert.id}`);
    expect(detail).toContain('No open alert');
    expect(detail).not.toMatch(/:warning:|:rotating_light:/);
    const mine = await ask('mine', 'CACME', 'U0ALICE');
    expect(mine).toContain(live.name);
    expect(mine).not.toContain(shadow.name);
    // Acting on it from here finds nothing to act on, and changes nothing.
    expect(await ask(`silence ${shadow.name} 1h`, 'CACME', 'U0ALICE')).toContain('has no open alert');
    expect((await openAlertOf(shadow)).silencedBy).toBeNull();

    // A member of the platform channel, and a global admin, are told of it, privately, here too.
    for (const user of ['U0OPS', 'U0BOSS']) {
      expect(await ask('status', 'CACME', user)).toContain(`alert #${shadowAlert.id}`);
      expect(await ask(`status ${shadow.name}`, 'CACME', user)).toContain(`#${shadowAlert.id}`);
    }
    expect(await ask('mine', PLATFORM, 'U0ALICE')).toContain(shadow.name);
  });
});

describe('an alert in shadow pings nobody', () => {
  it("its owner's reminder and a lapsed ownership name the owner in the platform thread without mentioning them", async () => {
    await t.db.updateTable('tenants').set({ ownershipExpiresAfterSeconds: 6 * 3600 }).where('id', '=', 'acme').execute();
    const shadow = await hourly(true);
    await failTwice(shadow);
    const alert = await openAlertOf(shadow);
    const owned = engine.clock.now();
    await t.db.updateTable('alerts').set({ ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: owned }).where('id', '=', alert.id).execute();

    engine.clock.set(new Date(owned.getTime() + minutes(121)));
    await runEscalationClock(engine.deps);
    engine.clock.set(new Date(owned.getTime() + minutes(6 * 60 + 1)));
    await runEscalationClock(engine.deps);
    await rig.drain();

    const root = rig.slack.roots(PLATFORM).find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    const replies = rig.slack.replies(PLATFORM, root.ts);
    const reminder = replies.find((m) => m.metadata?.event_payload.event === 'reminder')!;
    // Past its deadline when the ownership expired: the lapse is told in the escalation it brings, one reply.
    expect(replies.some((m) => m.metadata?.event_payload.event === 'ownership_expired')).toBe(false);
    const expired = replies.find((m) => m.metadata?.event_payload.event === 'escalated')!;
    expect(expired.text).toContain('ownership by @U0ALICE expired after 6h');
    for (const reply of [reminder, expired]) {
      expect(reply.text).toContain('@U0ALICE');
      expect(JSON.stringify(rig.slack.callsTo('chat.postMessage').find((c) => c.ts === reply.ts)!.args)).not.toMatch(/<@U|<!subteam|<!channel|<!here/);
    }
    expect(rig.slack.roots('CACME').some((m) => m.metadata?.event_payload.alert_id === alert.id)).toBe(false);
  });
});

describe("a tenant channel's storm", () => {
  it('shows none of the state of a member put in shadow since, when it is re-rendered', async () => {
    await makeTenant(t.db, { id: 'initech', name: 'Initech', channel: 'CINIT' });
    const tick = new Date(Math.floor(engine.clock.now().getTime() / 3_600_000) * 3_600_000 + 3_600_000);
    engine.clock.set(new Date(tick.getTime() + minutes(1)));
    const wfs: Workflow[] = [];
    for (let i = 0; i < 6; i++) {
      const wf = await makeWorkflow(t.db, { tenantId: 'initech', name: `load-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) });
      await reportRun(t.db, wf, tick, { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
      wfs.push(wf);
    }
    await engine.drain();
    await rig.drain();
    const storm = await t.db.selectFrom('storms').selectAll().where('destination', '=', 'slack:CINIT').executeTakeFirstOrThrow();
    const stormMessage = () => JSON.stringify(rig.slack.roots('CINIT').find((m) => m.ts === storm.rootTs)!);
    const [hidden, other] = [wfs[0]!, wfs[1]!];
    const hiddenAlert = await openAlertOf(hidden);
    expect(stormMessage()).toContain(`storm:${storm.id}:${hiddenAlert.id}`);

    // Put in shadow; then it is owned and fails anew, and another member's failure re-renders the storm message.
    await t.db.updateTable('workflows').set({ shadow: true }).where('id', '=', hidden.id).execute();
    await t.db.updateTable('alerts').set({ ownerUser: 'U0SHADOWOWNER' }).where('id', '=', hiddenAlert.id).execute();
    const next = new Date(tick.getTime() + 3_600_000);
    engine.clock.set(new Date(next.getTime() + minutes(1)));
    await reportRun(t.db, hidden, next, { status: 'failed', error: 'secret shadow failure' }, engine.clock.now());
    await reportRun(t.db, other, next, { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
    await engine.drain();
    await rig.drain();

    await eventually(() => expect(stormMessage()).toContain('2 failures'));
    const message = stormMessage();
    expect(message).not.toContain(`storm:${storm.id}:${hiddenAlert.id}`);
    expect(message).not.toContain('U0SHADOWOWNER');
    expect(message).not.toContain('secret shadow failure');
    expect(message).toContain('5 open');

    // Its storm summary elsewhere no longer counts it open either, for those not told of shadow alerts.
    expect(await ask('status', 'CINIT', 'U0ALICE')).toMatch(/6 alerts \(5 open\)/);
    expect(await ask('status', 'CINIT', 'U0OPS')).toMatch(/6 alerts \(6 open\)/);
    const home = async (shadow: boolean) => JSON.stringify(renderHome(await homeModel(t.db, engine.clock.now(), ['initech'], 'U0ALICE', { shadow }), engine.clock.now()).blocks);
    expect(await home(false)).toMatch(/6 alerts \(5 open\)/);
    expect(await home(true)).toMatch(/6 alerts \(6 open\)/);

    // A ⋯ menu of it rendered before (a client not yet refreshed) acts on nothing from the tenant's channel.
    const before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.stormAlertMenu, blockId: stormBlockId(storm.id, hiddenAlert.id), selected: `${hiddenAlert.id}:silence:1h`, channel: 'CINIT', user: 'U0ALICE' });
    const refused = await eventually(() => rig.slack.responses.slice(before).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
    expect(String(refused.body.text)).toContain("can't find that alert");
    expect(rig.slack.responses.slice(before).some((r) => r.body.replace_original === true)).toBe(false);
    expect((await openAlertOf(hidden)).silencedBy).toBeNull();
  });
});

describe("a tenant's channel, once an alert told there went into shadow", () => {
  it('its root buttons act on nothing from there, and pause and resume do not say its thread was told', async () => {
    await t.db.updateTable('tenants').set({ rights: JSON.stringify({ admins: ['U0ALICE'] }) as never }).where('id', '=', 'acme').execute();
    const wf = await hourly(false);
    await failTwice(wf);
    const alert = await openAlertOf(wf);
    expect(rig.slack.roots('CACME').some((m) => m.metadata?.event_payload.alert_id === alert.id)).toBe(true);
    await t.db.updateTable('workflows').set({ shadow: true }).where('id', '=', wf.id).execute();

    const click = async (user: string) => {
      const before = rig.slack.responses.length;
      await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user });
      const answer = await eventually(() => rig.slack.responses.slice(before).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
      // Nothing re-rendered in place: the channel would read the shadow alert's state.
      expect(rig.slack.responses.slice(before).some((r) => r.body.replace_original === true)).toBe(false);
      return String(answer.body.text);
    };
    expect(await click('U0ALICE')).toContain("can't find that alert");
    // A member of the platform channel is told of it, and sent there to act.
    expect(await click('U0OPS')).toBe(SHADOW_HERE_TEXT);
    expect((await openAlertOf(wf)).ownerUser).toBeNull();

    // The channel cannot see the shadow alert's thread, so the pause is said in the channel, the alert unmentioned.
    const paused = await ask(`pause ${wf.name}`, 'CACME', 'U0ALICE');
    expect(JSON.parse(paused)).toMatchObject({ response_type: 'in_channel', text: expect.stringContaining('<@U0ALICE> paused') });
    expect(paused).not.toContain('thread');
    expect(paused).not.toContain('alert #');
    const resumed = await ask(`resume ${wf.name}`, 'CACME', 'U0ALICE');
    expect(JSON.parse(resumed)).toMatchObject({ response_type: 'in_channel', text: expect.stringContaining('<@U0ALICE> resumed') });
    expect(resumed).not.toContain('thread');
  });
});
