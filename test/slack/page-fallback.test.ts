import { beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, PLATFORM, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { usePeopleRig } from '../helpers/people-rig.js';

/**
 * A page whose names reach nobody falls back one rung at a time: the owner,
 * the tenant's on-call, the platform's on-call (PLATFORM_ONCALL, paged in the
 * platform channel), and says why (docs/alerts.md, "A page that reaches
 * nobody"). Slack is the recording stand-in: its users.info and
 * usergroups.users.list answers are what the bot asks at send time.
 */
const START = new Date('2026-03-10T00:00:00Z');
const people = usePeopleRig(START, './check', { PLATFORM_ONCALL: 'SOPS', STORM_MIN_ALERTS: '0' });
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(async () => {
  ({ t, engine, rig } = people);
  rig.slack.groupMembers.set('SOPS', ['U0OPS']);
});

const critical = { retries: 0, recoverAfter: 1, alertAfter: 1, firstSeverity: 'critical' };
let seq = 0;

/** A tenant whose on-call is `group` (with `members` in Slack), and one of its workflows failing once into a critical alert. */
async function criticalAlert(tenant: string, group: string, members: string[], cron = '0 * * * *'): Promise<Alert> {
  const channel = `C${tenant.toUpperCase()}`;
  await makeTenant(t.db, { id: tenant, name: tenant, channel, oncall: JSON.stringify({ group }) });
  rig.slack.groupMembers.set(group, members);
  const wf = await makeWorkflow(t.db, { tenantId: tenant, name: `page-${++seq}`, cron, mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: './check' }), policy: JSON.stringify(critical) });
  // Past the directory's minute, on a whole hour.
  const hour = Math.ceil((engine.clock.now().getTime() + minutes(2)) / 3_600_000) * 3_600_000;
  engine.clock.set(new Date(hour + minutes(1)));
  await fireTick(engine, wf, new Date(hour), { status: 'failed', error: 'boom' });
  await engine.drain();
  await rig.drain();
  return t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
}

/** The alert's thread in a channel: its root, and the replies under it as Slack holds them. */
function thread(channel: string, alertId: number) {
  const root = rig.slack.roots(channel).find((m) => m.metadata?.event_payload.alert_id === alertId);
  if (!root) throw new Error(`no root for alert ${alertId} in ${channel}`);
  return { root, replies: rig.slack.replies(channel, root.ts) };
}
const shown = (m: { text: string; blocks?: unknown[] }) => `${m.text}\n${JSON.stringify(m.blocks ?? [])}`;

/** The broadcast replies (pages) posted in the alert's thread of a channel. */
function pages(channel: string, alertId: number): string[] {
  const { root } = thread(channel, alertId);
  return rig.slack
    .callsTo('chat.postMessage')
    .filter((c) => c.args.channel === channel && c.args.thread_ts === root.ts && String(c.args.reply_broadcast) === 'true')
    .map((c) => `${String(c.args.text)}\n${JSON.stringify(c.args.blocks)}`);
}

async function ask(text: string, channel: string): Promise<string> {
  const before = rig.slack.responses.length;
  await rig.command(text, { channel, user: 'U0ASKER' });
  return eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral');
    if (!r) throw new Error('no answer yet');
    return String(r.body.text);
  });
}

describe('a page falls back one rung at a time, and says why', () => {
  it("an owner whose account is deactivated: their reminder pages the tenant's on-call instead, saying so", async () => {
    const alert = await criticalAlert('fox', 'SFOX', ['U0FOXY'], '*/5 * * * *');
    const wf = await t.db.selectFrom('workflows').select('name').where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
    await rig.command(`ack ${wf.name}`, { channel: 'CFOX', user: 'U0ALICE' });
    const owned = await eventually(async () => {
      const row = await t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
      if (row.ownerUser !== 'U0ALICE') throw new Error('not owned yet');
      return row.acknowledgedAt!;
    });
    rig.slack.directory.users.set('U0ALICE', { deleted: true });
    engine.clock.set(new Date(owned.getTime() + minutes(30)));
    await runEscalationClock(engine.deps);
    await rig.drain();
    const reminder = thread('CFOX', alert.id).replies.find((m) => m.metadata?.event_payload.event === 'reminder');
    if (!reminder) throw new Error('no reminder posted');
    expect(shown(reminder)).toContain("<@U0ALICE>'s account is deactivated: paging the on-call instead, <!subteam^SFOX>.");
  });

  it("the tenant's on-call group empty: the platform's on-call is paged in the platform channel, the tenant told only that it was", async () => {
    const alert = await criticalAlert('golf', 'SGOLF', []);
    const [tenantPage, ...more] = pages('CGOLF', alert.id);
    expect(more).toEqual([]);
    expect(tenantPage).toContain("<!subteam^SGOLF> has no members: the platform's on-call was paged.");
    expect(tenantPage).not.toContain('SOPS');
    expect(tenantPage).not.toContain('Nobody was notified');
    const [platformPage, ...again] = pages(PLATFORM, alert.id);
    expect(again).toEqual([]);
    expect(platformPage).toContain('Paging <!subteam^SOPS>.');
    expect(platformPage).toContain("<!subteam^SGOLF> has no members: paging the platform's on-call.");

    const answer = await ask('oncall', 'CGOLF');
    expect(answer).toContain("until then its pages fall to the platform's on-call");
    expect(answer).not.toContain('SOPS');
  });

  it('a lookup Slack refused (a rate limit) is paged, not passed over: the platform is not paged for a blip', async () => {
    rig.slack.failNext({ kind: 'ratelimited' }, { method: 'usergroups.users.list', times: 50 });
    const alert = await criticalAlert('india', 'SINDIA', []);
    rig.slack.clearFaults();
    const [tenantPage] = pages('CINDIA', alert.id);
    expect(tenantPage).toContain('Paging <!subteam^SINDIA>.');
    expect(tenantPage).not.toContain("platform's on-call");
    const [platformPage] = pages(PLATFORM, alert.id);
    expect(platformPage).toContain('Paging <!subteam^SINDIA>.');
    expect(platformPage).not.toContain('SOPS');
  });

  it('a platform page whose answer was lost is found on redelivery, not posted twice', async () => {
    rig.slack.failNext({ kind: 'lost' }, { method: 'chat.postMessage', channel: PLATFORM, inThread: true });
    const alert = await criticalAlert('juliet', 'SJULIET', []);
    const platformPages = thread(PLATFORM, alert.id).replies.filter((m) => shown(m).includes('<!subteam^SOPS>'));
    expect(platformPages).toHaveLength(1);
    // The answer to the page's post was lost: the sender looked for it, found it, and posted nothing more.
    expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.args.channel === PLATFORM && c.outcome === 'lost')).toHaveLength(1);
    expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.args.channel === PLATFORM && c.args.thread_ts === thread(PLATFORM, alert.id).root.ts)).toHaveLength(1);
  });

  it("every rung reaching nobody: the page is broadcast in the platform channel with a warning naming every rung and why", async () => {
    rig.slack.groupMembers.set('SOPS', []);
    const alert = await criticalAlert('hotel', 'SHOTEL', []);
    const [platformPage] = pages(PLATFORM, alert.id);
    expect(platformPage).toContain(":warning: Nobody was notified: the on-call: <!subteam^SHOTEL> has no members; the platform's on-call: <!subteam^SOPS> has no members.");
    const [tenantPage] = pages('CHOTEL', alert.id);
    expect(tenantPage).toContain(':warning: Nobody was notified: <!subteam^SHOTEL> has no members.');
    expect(tenantPage).not.toContain('SOPS');
    expect(await ask('oncall', 'CHOTEL')).toContain('until then its pages reach nobody');
    rig.slack.groupMembers.set('SOPS', ['U0OPS']);
  });
});
