import { beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { ACTION, REASSIGN_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, PLATFORM, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';
import { usePeopleRig } from '../helpers/people-rig.js';

/**
 * The people a real workspace holds besides active members: deactivated
 * accounts and bots still listed in a channel, on-call groups that are empty
 * or disabled, and user-group rights Slack cannot be asked about just now
 * (docs/slack.md, Rights; On call). Slack is the recording stand-in.
 */
const START = new Date('2026-03-10T00:00:00Z');
const people = usePeopleRig(START);
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(() => void ({ t, engine, rig } = people));

/** The answer to a command: private, or in the channel for a change no thread tells (a pause with no alert open). */
async function ask(text: string, channel: string, user: string): Promise<string> {
  const before = rig.slack.responses.length;
  await rig.command(text, { channel, user });
  return eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral' || x.body.response_type === 'in_channel');
    if (!r) throw new Error('no answer yet');
    return String(r.body.text);
  });
}

async function openAlert(wf: Workflow) {
  for (const m of [60, 120, 180]) {
    engine.clock.set(new Date(Math.max(START.getTime() + minutes(m + 1), engine.clock.now().getTime())));
    await fireTick(engine, wf, new Date(START.getTime() + minutes(m)), { status: 'failed', error: 'boom', stage: 'upload' });
    await engine.drain();
  }
  return t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow();
}

const submission = (alertId: number, user: string) => ({
  type: 'view_submission',
  team: { id: 'T0TEST' },
  user: { id: 'U0LEAD' },
  api_app_id: 'A0TEST',
  view: {
    id: 'V1',
    callback_id: VIEW.reassign,
    private_metadata: JSON.stringify({ alertId, channel: 'CACME' }),
    state: {
      values: {
        [REASSIGN_FIELD.team.block]: { [REASSIGN_FIELD.team.action]: { type: 'static_select', selected_option: { value: 'engineering' } } },
        [REASSIGN_FIELD.user.block]: { [REASSIGN_FIELD.user.action]: { type: 'users_select', selected_user: user } },
        [REASSIGN_FIELD.note.block]: { [REASSIGN_FIELD.note.action]: { type: 'plain_text_input', value: 'yours' } },
      },
    },
  },
});

describe('who can be handed an alert', () => {
  it('a deactivated account, a bot and the scheduler itself, though Slack lists them in the channel, are refused by command and by form; a person is, from a Slack Connect organisation too', async () => {
    rig.slack.channelMembers.set('CACME', ['U0LEAD', 'U0ALICE', 'U0GONE', 'U0ROBOT', 'U0SCHEDBOT', 'U0CUSTOMER']);
    // The customer's engineer, from another organisation in the shared (Slack Connect) channel: a member like any other.
    rig.slack.directory.users.set('U0CUSTOMER', { team_id: 'T0CUSTOMER' });
    rig.slack.directory.users.set('U0GONE', { deleted: true });
    rig.slack.directory.users.set('U0ROBOT', { is_bot: true });
    const wf = await people.workflow('0 * * * *');
    const alert = await openAlert(wf);

    expect(await ask(`reassign ${wf.name} <@U0GONE|gone> yours`, 'CACME', 'U0LEAD')).toMatch(/^<@U0GONE> can't be handed this alert: their Slack account is deactivated/);
    expect(await ask(`reassign ${wf.name} <@U0SCHEDBOT|scheduler> yours`, 'CACME', 'U0LEAD')).toMatch(/^<@U0SCHEDBOT> can't be handed this alert: that is a bot/);
    const before = rig.slack.callsTo('chat.postEphemeral').length;
    expect((await rig.interact(submission(alert.id, 'U0ROBOT'))).status).toBe(200);
    const told = await eventually(() => rig.slack.callsTo('chat.postEphemeral')[before] ?? Promise.reject(new Error('not told yet')));
    expect(String(told.args.text)).toMatch(/^<@U0ROBOT> can't be handed this alert: that is a bot/);
    const row = () => t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(await row()).toMatchObject({ ownerUser: null });

    expect(await ask(`reassign ${wf.name} <@U0CUSTOMER|cust> over to you`, 'CACME', 'U0LEAD')).toContain("<@U0CUSTOMER>'s now");
    expect((await row()).ownerUser).toBe('U0CUSTOMER');
    expect(await ask(`reassign ${wf.name} <@U0ALICE|alice> yours`, 'CACME', 'U0LEAD')).toContain("<@U0ALICE>'s now");
    expect((await row()).ownerUser).toBe('U0ALICE');
  });
});

describe('/scheduler oncall asks Slack whether the on-call reaches anyone', () => {
  it('an empty group, a disabled group and a deactivated or bot user are named as such, and a tenant whose on-call reaches nobody is warned', async () => {
    await makeTenant(t.db, { id: 'beta', name: 'Beta', channel: 'CBETA', oncall: JSON.stringify({ group: 'SEMPTY' }) });
    await makeTenant(t.db, { id: 'gamma', name: 'Gamma', channel: 'CGAMMA', oncall: JSON.stringify({ group: 'SOFF', users: ['U0GONE2', 'U0ROBOT2', 'U0CAROL'] }) });
    rig.slack.groupMembers.set('SONCALL', ['U0ALICE']);
    rig.slack.groupMembers.set('SEMPTY', []);
    rig.slack.groupMembers.set('SOFF', ['U0CAROL']);
    rig.slack.directory.disabledGroups.add('SOFF');
    rig.slack.directory.users.set('U0GONE2', { deleted: true });
    rig.slack.directory.users.set('U0ROBOT2', { is_bot: true });

    expect(await ask('oncall', 'CACME', 'U0ALICE')).toBe('On call:\n• *Acme*: <!subteam^SONCALL>');
    const beta = await ask('oncall', 'CBETA', 'U0ALICE');
    expect(beta).toContain('<!subteam^SEMPTY> (<!subteam^SEMPTY> has no members)');
    expect(beta).toContain('*Escalations page nobody*');
    const gamma = await ask('oncall', 'CGAMMA', 'U0ALICE');
    expect(gamma).toContain('<!subteam^SOFF> is disabled or deleted in Slack; <@U0GONE2> is deactivated; <@U0ROBOT2> is a bot, not a person');
    expect(gamma).not.toContain('page nobody'); // Carol is still paged.

    rig.slack.directory.users.set('U0CAROL', { deleted: true });
    engine.clock.advance(minutes(2)); // past the directory's minute
    expect(await ask('oncall', PLATFORM, 'U0OPS')).toMatch(/• \*Gamma\*: .*<@U0CAROL> is deactivated\)( :warning:)? \*Escalations page nobody\*/);
  });
});

describe('a page that reaches nobody', () => {
  it('is posted with a line saying nobody was notified and why; a page that reaches someone carries none', async () => {
    await makeTenant(t.db, { id: 'echo', name: 'Echo', channel: 'CECHO', oncall: JSON.stringify({ group: 'SECHO' }) });
    rig.slack.groupMembers.set('SECHO', []);
    rig.slack.groupMembers.set('SONCALL', ['U0ALICE']);
    const critical = { retries: 0, recoverAfter: 1, alertAfter: 1, firstSeverity: 'critical' };
    const echo = await makeWorkflow(t.db, { tenantId: 'echo', name: 'echo-job', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: './check' }), policy: JSON.stringify(critical) });
    const acme = await people.workflow('30 * * * *', critical);
    const pageIn = async (channel: string) => {
      await rig.drain();
      const page = rig.slack.callsTo('chat.postMessage').filter((c) => c.args.channel === channel && String(c.args.reply_broadcast) === 'true').at(-1);
      if (!page) throw new Error(`no page in ${channel}`);
      return `${String(page.args.text)}\n${JSON.stringify(page.args.blocks)}`;
    };
    engine.clock.set(new Date(Math.max(engine.clock.now().getTime(), Date.parse('2026-03-11T00:00:00Z')) + minutes(61)));
    const hour = new Date(Math.floor(engine.clock.now().getTime() / 3_600_000) * 3_600_000);
    await fireTick(engine, echo, hour, { status: 'failed', error: 'boom' });
    await fireTick(engine, acme, new Date(hour.getTime() - minutes(30)), { status: 'failed', error: 'boom' });
    await engine.drain();
    const empty = await pageIn('CECHO');
    expect(empty).toContain(':warning: Nobody was notified: <!subteam^SECHO> has no members. Take the alert here; `/scheduler oncall` shows who escalations reach.');
    // Acme's on-call group has a member: its page says nothing more.
    expect(await pageIn('CACME')).not.toContain('Nobody was notified');
  });
});

describe('rights that name a user group', () => {
  it("a lookup Slack refuses (rate limit) fails closed and says so; an admin dropped from the group loses the right within the directory's minute", async () => {
    await makeTenant(t.db, { id: 'delta', name: 'Delta', channel: 'CDELTA', rights: JSON.stringify({ admins: ['SADMINS'] }) });
    const wf = await makeWorkflow(t.db, { tenantId: 'delta', name: 'delta-job', cron: '0 * * * *' });
    rig.slack.groupMembers.set('SADMINS', ['U0DANA']);
    rig.slack.failNext({ kind: 'ratelimited' }, { method: 'usergroups.users.list' });

    const refused = await ask(`pause ${wf.name} vendor outage`, 'CDELTA', 'U0DANA');
    expect(refused).toContain("I couldn't check with Slack just now whether you are in <!subteam^SADMINS>");
    expect(refused).toContain('nothing changed');
    expect((await t.db.selectFrom('workflows').select('pausedAt').where('id', '=', wf.id).executeTakeFirstOrThrow()).pausedAt).toBeNull();

    // Not cached: the next try asks Slack again.
    expect(await ask(`pause ${wf.name} vendor outage`, 'CDELTA', 'U0DANA')).toMatch(/paused/i);
    expect(await ask(`resume ${wf.name}`, 'CDELTA', 'U0DANA')).toMatch(/resumed/i);

    // Dropped from the group: the answer Slack gave is kept a minute, then asked again.
    rig.slack.groupMembers.set('SADMINS', ['U0ERIN']);
    engine.clock.advance(61_000);
    expect(await ask(`pause ${wf.name} vendor outage`, 'CDELTA', 'U0DANA')).toMatch(/^Only Delta's admins can pause or resume this tenant's workflows\. Ask <!subteam\^SADMINS>\./);

    // The group disabled in Slack: nobody is admin through it (fail closed), and the answer says why rather than "ask the group".
    rig.slack.directory.disabledGroups.add('SADMINS');
    engine.clock.advance(61_000);
    const gone = await ask(`pause ${wf.name} vendor outage`, 'CDELTA', 'U0ERIN');
    expect(gone).toContain("Only Delta's admins can pause or resume this tenant's workflows. (<!subteam^SADMINS>, named in its `rights`, is disabled or deleted in Slack.) Nobody else is named");
    expect(gone).not.toContain("couldn't check");
    expect((await t.db.selectFrom('workflows').select('pausedAt').where('id', '=', wf.id).executeTakeFirstOrThrow()).pausedAt).toBeNull();
  });
});

describe('Take ownership from two replicas in the same second', () => {
  it("someone in the tenant's channel and someone in the platform channel: one owner, one thread reply, the other told who owns it", async () => {
    const other = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: PLATFORM, REPLICA_ID: 'slack-rig-2' } });
    try {
      const wf = await people.workflow('0 * * * *');
      const alert = await openAlert(wf);
      await rig.drain();
      const before = { here: rig.slack.responses.length, there: other.slack.responses.length };
      await Promise.all([
        rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' }),
        other.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: PLATFORM, user: 'U0OPS' }),
      ]);
      const answers = await eventually(() => {
        const all = [...rig.slack.responses.slice(before.here), ...other.slack.responses.slice(before.there)];
        if (all.length < 2) throw new Error('not both answered yet');
        return all;
      });
      const taken = await t.db.selectFrom('alertEvents').select('actor').where('alertId', '=', alert.id).where('kind', '=', 'owner_changed').execute();
      expect(taken).toHaveLength(1);
      const winner = taken[0]!.actor!;
      expect((await t.db.selectFrom('alerts').select('ownerUser').where('id', '=', alert.id).executeTakeFirstOrThrow()).ownerUser).toBe(winner);
      expect(answers.filter((r) => r.body.replace_original === true)).toHaveLength(1);
      expect(answers.find((r) => r.body.response_type === 'ephemeral')?.body.text).toMatch(new RegExp(`^<@${winner}> already owns this alert\\. Ask them to hand it over, or an admin of this tenant can give it to you with \\*Reassign…\\*`));
      await Promise.all([rig.drain(), other.drain()]);
      const posted = [...rig.slack.callsTo('chat.postMessage'), ...other.slack.callsTo('chat.postMessage')].filter(
        (c) => c.metadata?.event_payload.alert_id === alert.id && c.metadata.event_payload.event === 'owner_changed',
      );
      expect(posted.map((c) => c.channel).sort()).toEqual(['CACME', PLATFORM].sort());
    } finally {
      await other.close();
    }
  });
});
