import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Launcher } from '../../src/launcher.js';
import { ACTION, REASSIGN_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { eventually, SIGNING_SECRET, slackSignature, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';
import { systemClock } from '../../src/clock.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

let t: TestDatabase;
let rig: SlackRig;
let acmeWf: { id: number; name: string };
let globexWf: { id: number; name: string };
const launched: number[] = [];
const launcher: Launcher = { kind: 'test', launch: async (ctx) => (launched.push(ctx.runId), { started: true }) };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  acmeWf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'quality-check' });
  globexWf = await makeWorkflow(t.db, { tenantId: 'globex', name: 'globex-import', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
  await makeRun(t.db, { workflowId: acmeWf.id, status: 'failed', error: 'connection refused <!channel>' });
});
afterAll(() => t.drop());

beforeEach(async () => {
  rig = await startSlackRig(t.db, { launchers: (w) => (w.launcher ? launcher : undefined) });
});
afterEach(async () => {
  await rig.close();
  await t.db.deleteFrom('notifications').execute();
  await t.db.deleteFrom('alertThreads').execute();
  await t.db.deleteFrom('alertEvents').execute();
  await t.db.deleteFrom('runs').where('trigger', '=', 'manual').execute();
  await t.db.deleteFrom('alerts').execute();
});

async function openAlert(workflowId: number) {
  const alert = await insertAlert(t.db, workflowId);
  await addEvent(t.db, alert.id, 'opened', { now: T0, platformChannel: 'CPLAT' });
  await rig.drain();
  return alert;
}

const alertRow = (id: number) => t.db.selectFrom('alerts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const nthResponse = (i: number) =>
  eventually(() => {
    const r = rig.slack.responses[i];
    if (!r) throw new Error(`no response #${i} yet`);
    return r;
  });
const lastResponse = () => nthResponse(0).then(() => rig.slack.responses.at(-1)!);

/**
 * A signed `/scheduler help`, answered: what was sent before it has been
 * through the app (no fixed sleep); it is the only response the test then expects.
 */
async function barrier() {
  expect((await rig.command('help', { channel: 'CACME' })).status).toBe(200);
  expect((await nthResponse(0)).body.text).toContain('/scheduler status');
}

describe('request signing', () => {
  it('a bad signature gets 401 and changes nothing', async () => {
    const alert = await openAlert(acmeWf.id);
    const res = await rig.command('ack nightly-pipeline', { channel: 'CACME' }, { secret: 'not-the-secret' });
    expect(res.status).toBe(401);
    await barrier();
    expect(rig.slack.responses).toHaveLength(1);
    expect((await alertRow(alert.id)).ownerUser).toBeNull();
  });

  it('a stale signature (older than 5 minutes) gets 401 and changes nothing', async () => {
    const alert = await openAlert(acmeWf.id);
    const res = await rig.command('ack nightly-pipeline', { channel: 'CACME' }, { ageSeconds: 6 * 60 });
    expect(res.status).toBe(401);
    await barrier();
    expect(rig.slack.responses).toHaveLength(1);
    expect((await alertRow(alert.id)).ownerUser).toBeNull();
  });
});

describe('Slack retries', () => {
  /** Sends `body` signed as Slack does, as a first delivery or as Slack's retry number `retry`. */
  async function deliver(body: string, retry?: number) {
    const ts = Math.floor(systemClock.now().getTime() / 1000);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body) };
    if (retry) Object.assign(headers, { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'http_timeout' });
    return (await fetch(`${rig.url}/slack/events`, { method: 'POST', headers, body })).status;
  }
  const silencedEvents = (alertId: number) => t.db.selectFrom('alertEvents').select('actor').where('alertId', '=', alertId).where('kind', '=', 'silenced').execute();
  const answersTo = (id: string) => rig.slack.responses.filter((r) => r.id === id);

  /** The first delivery answered, then the retry sent, then a command through the database answered: the retry has had its chance to act. */
  async function firstThenRetry(body: string, responseId: string) {
    expect(await deliver(body)).toBe(200);
    await eventually(() => expect(answersTo(responseId)).toHaveLength(1));
    expect(await deliver(body, 1)).toBe(200);
    await rig.command('status nightly-pipeline', { channel: 'CACME' });
    await eventually(() => expect(rig.slack.responses.some((r) => r.id.startsWith('cmd'))).toBe(true));
  }

  it('a command delivered again as a retry is acknowledged and not acted on twice', async () => {
    const alert = await openAlert(acmeWf.id);
    const body = new URLSearchParams({ token: 'legacy', team_id: 'T0TEST', channel_id: 'CACME', user_id: 'U0ALICE', command: '/scheduler', text: 'silence nightly-pipeline 1h', response_url: rig.slack.responseUrl('c1'), trigger_id: 'trigger-c1' }).toString();
    await firstThenRetry(body, 'c1');
    expect(answersTo('c1')).toHaveLength(1);
    expect(await silencedEvents(alert.id)).toHaveLength(1);
  });

  it('a button click delivered again as a retry is acknowledged and not acted on twice', async () => {
    const alert = await openAlert(globexWf.id);
    const payload = {
      type: 'block_actions',
      team: { id: 'T0TEST' },
      user: { id: 'U0CAROL' },
      api_app_id: 'A0TEST',
      container: { type: 'message', message_ts: '1.0', channel_id: 'CGLOBEX' },
      trigger_id: 'trigger-a1',
      channel: { id: 'CGLOBEX' },
      response_url: rig.slack.responseUrl('a1'),
      actions: [{ action_id: ACTION.runNow, block_id: 'alert_actions', action_ts: '1.0', type: 'button', value: String(alert.id) }],
    };
    // Run now answers a started run in place (the root re-rendered): one answer, the first delivery's.
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    expect(await deliver(body)).toBe(200);
    await eventually(async () => expect(await t.db.selectFrom('runs').select('id').where('trigger', '=', 'manual').execute()).toHaveLength(1));
    await eventually(() => expect(answersTo('a1')).toHaveLength(1));
    await t.db.updateTable('runs').set({ status: 'succeeded', finishedAt: rig.clock.now() }).where('trigger', '=', 'manual').execute();
    expect(await deliver(body, 2)).toBe(200);
    await rig.command('status nightly-pipeline', { channel: 'CACME' });
    await eventually(() => expect(rig.slack.responses.some((r) => r.id.startsWith('cmd'))).toBe(true));
    expect(await t.db.selectFrom('runs').select('id').where('trigger', '=', 'manual').execute()).toHaveLength(1);
    expect(answersTo('a1')).toHaveLength(1);
    expect(answersTo('a1')[0]!.body).toMatchObject({ replace_original: true });
  });
});

describe('/scheduler', () => {
  it('status in a tenant channel lists that tenant\'s workflows and nothing of others', async () => {
    const res = await rig.command('status', { channel: 'CACME' });
    expect(res.status).toBe(200);
    const r = await lastResponse();
    expect(r.body.response_type).toBe('ephemeral');
    const all = JSON.stringify(r.body);
    expect(all).toContain('nightly-pipeline');
    expect(all).toContain('quality-check');
    expect(all).not.toContain('globex');
  });

  it('status in the platform channel lists every tenant', async () => {
    await rig.command('status', { channel: 'CPLAT' });
    const all = JSON.stringify((await lastResponse()).body);
    expect(all).toContain('nightly-pipeline');
    expect(all).toContain('globex-import');
  });

  it('status <workflow> shows its profile, last runs (escaped) and alert', async () => {
    await openAlert(acmeWf.id);
    await rig.command('status nightly-pipeline', { channel: 'CACME' });
    const all = JSON.stringify((await lastResponse()).body);
    expect(all).toContain('Open alert');
    expect(all).toContain('daily');
    expect(all).toContain('&lt;!channel&gt;');
    expect(all).not.toContain('<!channel>');
  });

  it('another tenant\'s workflow is unknown in a tenant channel; close names are suggested', async () => {
    await rig.command('history globex-import', { channel: 'CACME' });
    expect((await lastResponse()).body.text).toMatch(/No workflow called `globex-import` in Acme/);
    await rig.command('history nightly-pipelin', { channel: 'CACME' });
    expect((await nthResponse(1)).body.text).toContain('Did you mean `nightly-pipeline`');
    // In the platform channel the search was over all of them.
    await rig.command('history no-such-workflow', { channel: 'CPLAT' });
    expect((await nthResponse(2)).body.text).toMatch(/^No workflow called `no-such-workflow` in any tenant\./);
  });

  it('wrong usage gets the usage line; help lists the commands', async () => {
    await rig.command('silence nightly-pipeline soon', { channel: 'CACME' });
    expect((await lastResponse()).body.text).toContain('Usage: `/scheduler silence &lt;workflow&gt; &lt;duration');
    await rig.command('help', { channel: 'CACME' });
    expect((await nthResponse(1)).body.text).toContain('/scheduler history &lt;workflow&gt;');
  });

  it('an unlinked channel is refused politely', async () => {
    await rig.command('status', { channel: 'CRANDOM' });
    expect((await lastResponse()).body.text).toContain("isn't linked to a tenant");
  });

  it('ack takes ownership and answers the caller privately; the channel hears of it only in the thread', async () => {
    const alert = await openAlert(acmeWf.id);
    await rig.command('ack nightly-pipeline', { channel: 'CACME', user: 'U0BOB' });
    const r = await lastResponse();
    expect(r.body.response_type).toBe('ephemeral');
    expect((await alertRow(alert.id)).ownerUser).toBe('U0BOB');
    await rig.drain();
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    const [root] = rig.slack.roots('CACME');
    expect(rig.slack.replies('CACME', root!.ts).map((m) => m.text)).toEqual([expect.stringMatching(/: <@U0BOB> took ownership\. Escalation stopped\.$/)]);
  });

  it('silence <workflow> 4h reason silences until then; run on a workflow without launcher is refused', async () => {
    const alert = await openAlert(acmeWf.id);
    // Delivering the opening moved the clock on by the channels' pace.
    const asked = rig.clock.now();
    await rig.command('silence nightly-pipeline 4h vendor outage', { channel: 'CACME' });
    await lastResponse();
    const row = await alertRow(alert.id);
    expect(row.silencedUntil).toEqual(new Date(asked.getTime() + 4 * 3_600_000));
    expect(row.silenceReason).toBe('vendor outage');
    await rig.command('run nightly-pipeline', { channel: 'CACME' });
    expect((await nthResponse(1)).body.text).toContain('has no launcher');
  });

  it('reads the text as Slack sends it: a quoted name in another case, entities decoded once, a mention as @name', async () => {
    const alert = await openAlert(acmeWf.id);
    // should_escape: Slack sends & < > as entities and a mention as <@U…|name>.
    await rig.command('silence  “Nightly-Pipeline”  4h db &amp; cache, ask <@U0BOB|bob> &lt;!channel&gt;', { channel: 'CACME' });
    expect((await lastResponse()).body.text).toContain('Silenced the alert on *nightly-pipeline*');
    const row = await alertRow(alert.id);
    expect(row.silenceReason).toBe('db & cache, ask @bob <!channel>');
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    const reply = rig.slack.replies('CACME', root!.ts).find((m) => m.metadata?.event_payload.event === 'silenced');
    const shown = JSON.stringify(reply!.blocks);
    expect(shown).toContain('db &amp; cache, ask @bob &lt;!channel&gt;');
    expect(shown).not.toContain('&amp;amp;');
    expect(shown).not.toContain('<!channel>');
  });

  it('ADMIN_USERS limits long silences to admins, and the refusal names them', async () => {
    await rig.close();
    rig = await startSlackRig(t.db, { env: { ADMIN_USERS: 'U0ADMIN' } });
    const alert = await openAlert(acmeWf.id);
    await rig.command('silence nightly-pipeline 2d', { channel: 'CACME', user: 'U0ALICE' });
    const text = (await lastResponse()).body.text;
    expect(text).toContain("Only Acme's admins can silence for longer than 24 hours");
    expect(text).toContain('<@U0ADMIN>');
    expect(text).not.toContain('ADMIN_USERS');
    expect((await alertRow(alert.id)).silencedBy).toBeNull();
  });
});

describe('buttons', () => {
  it('Take ownership: the clicker owns it, escalation stops, one reply, root re-rendered with Release', async () => {
    const alert = await openAlert(acmeWf.id);
    const res = await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    expect(res.status).toBe(200);
    const row = await eventually(async () => {
      const a = await alertRow(alert.id);
      if (!a.acknowledgedAt) throw new Error('not yet');
      return a;
    });
    expect(row).toMatchObject({ ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE' });
    await rig.drain();
    for (const channel of ['CACME', 'CPLAT']) {
      const [root] = rig.slack.roots(channel);
      const replies = rig.slack.replies(channel, root!.ts);
      expect(replies).toHaveLength(1);
      expect(replies[0]!.text).toContain('<@U0ALICE> took ownership');
      expect(root!.updates).toBe(1);
      expect(JSON.stringify(root!.blocks)).toContain(ACTION.release);
      expect(JSON.stringify(root!.blocks)).not.toContain(ACTION.takeOwnership);
    }
    // No private refusal: the only answer is the clicked message replaced in place with the new state.
    await eventually(() => expect(rig.slack.responses.map((r) => [r.body.response_type, r.body.replace_original])).toEqual([[undefined, true]]));
  });

  it('a payload naming another tenant\'s alert is refused and changes nothing', async () => {
    const theirs = await openAlert(globexWf.id);
    await rig.click({ actionId: ACTION.takeOwnership, value: String(theirs.id), channel: 'CACME' });
    expect((await lastResponse()).body).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining("can't find that alert") });
    expect((await alertRow(theirs.id)).ownerUser).toBeNull();
    expect(await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', theirs.id).execute()).toEqual([{ kind: 'opened' }]);
  });

  it('a malformed value is refused with a reason', async () => {
    await rig.click({ actionId: ACTION.takeOwnership, value: 'drop table', channel: 'CACME' });
    expect((await lastResponse()).body.text).toContain('does not name an alert');
  });

  it('Silence 1h then Unsilence', async () => {
    const alert = await openAlert(acmeWf.id);
    const clicked = rig.clock.now();
    await rig.click({ actionId: ACTION.silence, selected: `${alert.id}:1h`, channel: 'CACME' });
    await eventually(async () => expect((await alertRow(alert.id)).silencedUntil).toEqual(new Date(clicked.getTime() + 3_600_000)));
    await rig.click({ actionId: ACTION.unsilence, value: String(alert.id), channel: 'CACME' });
    await eventually(async () => expect((await alertRow(alert.id)).silencedBy).toBeNull());
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    const texts = rig.slack.replies('CACME', root!.ts).map((m) => m.text);
    expect(texts[0]).toMatch(/^Acme \/ nightly-pipeline: <@U0ALICE> silenced the alert until /);
    expect(texts[1]).toMatch(/^Acme \/ nightly-pipeline: <@U0ALICE> unsilenced the alert\./);
  });

  it('two people picking Silence at once: one silence, one thread reply; the other is told whose silence holds', async () => {
    const alert = await openAlert(acmeWf.id);
    // Both saw the root unsilenced: one in the tenant's channel, one in the platform channel.
    await Promise.all([
      rig.click({ actionId: ACTION.silence, selected: `${alert.id}:1h`, channel: 'CACME', user: 'U0ALICE' }),
      rig.click({ actionId: ACTION.silence, selected: `${alert.id}:4h`, channel: 'CPLAT', user: 'U0BOB' }),
    ]);
    const answers = await eventually(() => {
      if (rig.slack.responses.length < 2) throw new Error('not both answered yet');
      return rig.slack.responses;
    });
    const silenced = await t.db.selectFrom('alertEvents').select('actor').where('alertId', '=', alert.id).where('kind', '=', 'silenced').execute();
    expect(silenced).toHaveLength(1);
    const winner = silenced[0]!.actor!;
    const row = await alertRow(alert.id);
    expect(row.silencedBy).toBe(winner);
    expect(answers.filter((r) => r.body.replace_original === true)).toHaveLength(1);
    const refusal = answers.find((r) => r.body.response_type === 'ephemeral');
    expect(refusal?.body.text).toMatch(new RegExp(`^<@${winner}> already silenced this alert until `));
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    expect(rig.slack.replies('CACME', root!.ts).filter((m) => m.text.includes('silenced the alert'))).toHaveLength(1);
  });

  it('Run now starts a manual run through the launcher; without one it is refused', async () => {
    const theirs = await openAlert(globexWf.id);
    await rig.click({ actionId: ACTION.runNow, value: String(theirs.id), channel: 'CGLOBEX', user: 'U0CAROL' });
    const run = await eventually(async () => t.db.selectFrom('runs').selectAll().where('trigger', '=', 'manual').executeTakeFirstOrThrow());
    expect(run.requestedBy).toBe('U0CAROL');
    // Answered in the root clicked (test/slack/run-now-answer.test.ts).
    expect((await nthResponse(0)).body).toMatchObject({ replace_original: true });
    await eventually(() => expect(launched).toContain(run.id));
    await rig.drain();
    const [root] = rig.slack.roots('CGLOBEX');
    expect(rig.slack.replies('CGLOBEX', root!.ts).map((m) => m.text)).toEqual([expect.stringMatching(new RegExp(`: <@U0CAROL> started run #${run.id}\\.$`))]);

    const ours = await openAlert(acmeWf.id);
    await rig.click({ actionId: ACTION.runNow, value: String(ours.id), channel: 'CACME' });
    expect((await nthResponse(1)).body.text).toContain('has no launcher');
  });

  it('Run now on a paused workflow starts the one run it was asked for, and says the workflow stays paused', async () => {
    const theirs = await openAlert(globexWf.id);
    await t.db.updateTable('workflows').set({ paused: true, pausedAt: rig.clock.now(), pausedBy: 'U0OPS' }).where('id', '=', globexWf.id).execute();
    try {
      await rig.click({ actionId: ACTION.runNow, value: String(theirs.id), channel: 'CGLOBEX', user: 'U0CAROL' });
      expect((await lastResponse()).body).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('*globex-import* is paused: this run is a one-off') });
      const run = await eventually(async () => t.db.selectFrom('runs').selectAll().where('trigger', '=', 'manual').executeTakeFirstOrThrow());
      await eventually(() => expect(launched).toContain(run.id));
      await rig.drain();
      const [root] = rig.slack.roots('CGLOBEX');
      expect(rig.slack.replies('CGLOBEX', root!.ts).map((m) => m.text)).toEqual([expect.stringContaining(`started run #${run.id}, a one-off: the workflow stays paused.`)]);
      expect((await t.db.selectFrom('workflows').select('paused').where('id', '=', globexWf.id).executeTakeFirstOrThrow()).paused).toBe(true);
    } finally {
      await t.db.updateTable('workflows').set({ paused: false, pausedAt: null, pausedBy: null }).where('id', '=', globexWf.id).execute();
    }
  });

  it('Run now on a root whose alert has since resolved starts nothing and says why', async () => {
    const theirs = await openAlert(globexWf.id);
    await t.db.updateTable('alerts').set({ status: 'resolved', resolvedAt: rig.clock.now() }).where('id', '=', theirs.id).execute();
    await rig.click({ actionId: ACTION.runNow, value: String(theirs.id), channel: 'CGLOBEX', user: 'U0CAROL' });
    expect((await lastResponse()).body).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('already resolved') });
    expect((await lastResponse()).body.text).toContain('`/scheduler run globex-import`');
    expect(await t.db.selectFrom('runs').select('id').where('trigger', '=', 'manual').execute()).toEqual([]);
  });

  it('History answers privately with the last ticks', async () => {
    const alert = await openAlert(acmeWf.id);
    await rig.click({ actionId: ACTION.history, value: String(alert.id), channel: 'CACME' });
    const r = await lastResponse();
    expect(r.body.response_type).toBe('ephemeral');
    expect(r.body.text).toContain('History of nightly-pipeline');
    expect(JSON.stringify(r.body.blocks)).toContain('failed');
  });

  it('Reassign… opens the modal; handing to the customer needs a note; the submission reassigns', async () => {
    rig.slack.channelMembers.set('CACME', ['U0ALICE', 'U0BOB', 'U0CUST']);
    const alert = await openAlert(acmeWf.id);
    await rig.click({ actionId: ACTION.reassign, value: String(alert.id), channel: 'CACME' });
    const opened = await eventually(() => rig.slack.openedViews[0] ?? Promise.reject(new Error('no modal yet')));
    const view = opened.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(VIEW.reassign);

    const submit = (team: string, note: string | null) => rig.interact(reassignSubmission(view.private_metadata, { team, user: 'U0CUST', note }));
    const refused = await submit('customer', null);
    expect(refused.status).toBe(200);
    expect(JSON.parse(refused.text)).toMatchObject({ response_action: 'errors', errors: { note: expect.stringContaining('note is required') } });
    expect((await alertRow(alert.id)).ownerTeam).toBe('engineering');

    const ok = await submit('customer', 'Your API key expired; rotate it.');
    expect(ok.status).toBe(200);
    await eventually(async () => expect((await alertRow(alert.id)).ownerTeam).toBe('customer'));
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    expect(rig.slack.replies('CACME', root!.ts)[0]!.text).toBe(
      'Acme / nightly-pipeline: <@U0ALICE> reassigned the alert from engineering to customer (<@U0CUST>). Note: Your API key expired; rotate it.',
    );
    expect(JSON.stringify(rig.slack.replies('CACME', root!.ts)[0]!.blocks)).toContain('reassigned the alert from *engineering* to *customer* (<@U0CUST>).\\n> Your API key expired; rotate it.');
  });
});

describe('reassign to someone who could not act on the alert', () => {
  it("handing it to another tenant's person (not in the channel, not a responder) is refused, by form and by command; nothing changes", async () => {
    const alert = await openAlert(acmeWf.id);
    rig.slack.channelMembers.set('CACME', ['U0ALICE', 'U0BOB']);
    rig.slack.channelMembers.set('CGLOBEX', ['U0CAROL']);
    const metadata = JSON.stringify({ alertId: alert.id, channel: 'CACME' });
    const ok = await rig.interact(reassignSubmission(metadata, { team: 'engineering', user: 'U0CAROL', note: 'yours' }));
    expect(ok.status).toBe(200);
    const told = await eventually(() => rig.slack.callsTo('chat.postEphemeral').at(-1) ?? Promise.reject(new Error('not told yet')));
    expect(told.args).toMatchObject({ channel: 'CACME', user: 'U0ALICE' });
    expect(String(told.args.text)).toMatch(/^<@U0CAROL> can't be handed this alert: they are not in <#CACME> and not among Acme's responders/);

    await rig.command('reassign nightly-pipeline <@U0CAROL|carol> yours', { channel: 'CACME' });
    expect((await lastResponse()).body.text).toContain("<@U0CAROL> can't be handed this alert");
    expect(await alertRow(alert.id)).toMatchObject({ ownerUser: null, acknowledgedAt: null });
    expect(await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', alert.id).where('kind', '=', 'owner_changed').execute()).toEqual([]);

    // Someone in the channel is fine.
    await rig.command('reassign nightly-pipeline <@U0BOB|bob> yours', { channel: 'CACME' });
    await eventually(async () => expect((await alertRow(alert.id)).ownerUser).toBe('U0BOB'));
  });
});

describe('reassign answers in the root clicked', () => {
  it('the submission re-renders the root it was opened from at once, before the paced outbox posts the reply', async () => {
    rig.slack.channelMembers.set('CACME', ['U0ALICE', 'U0BOB', 'U0CUST']);
    const alert = await openAlert(acmeWf.id);
    const [root] = rig.slack.roots('CACME');
    await rig.interact({
      type: 'block_actions',
      team: { id: 'T0TEST', domain: 'example' },
      user: { id: 'U0ALICE', username: 'alice', team_id: 'T0TEST' },
      api_app_id: 'A0TEST',
      token: 'legacy',
      container: { type: 'message', message_ts: root!.ts, channel_id: 'CACME', is_ephemeral: false },
      trigger_id: 'reassign-trigger',
      channel: { id: 'CACME', name: 'alerts' },
      message: { type: 'message', ts: root!.ts, text: 'root' },
      response_url: rig.slack.responseUrl('reassign-click'),
      actions: [{ action_id: ACTION.reassign, block_id: 'alert_actions', action_ts: '9.0', type: 'button', value: String(alert.id) }],
    });
    const opened = await eventually(() => rig.slack.openedViews[0] ?? Promise.reject(new Error('no modal yet')));
    const view = opened.view as { private_metadata: string };
    expect(JSON.parse(view.private_metadata)).toEqual({ alertId: alert.id, channel: 'CACME', messageTs: root!.ts });

    const posted = rig.slack.callsTo('chat.postMessage').length;
    const ok = await rig.interact(reassignSubmission(view.private_metadata, { team: 'engineering', user: 'U0BOB', note: 'vendor ticket 42' }));
    expect(ok.status).toBe(200);
    const update = await eventually(() => rig.slack.callsTo('chat.update').find((c) => c.channel === 'CACME' && c.ts === root!.ts) ?? Promise.reject(new Error('no update yet')));
    expect(JSON.stringify(update.blocks)).toContain('<@U0BOB>');
    expect(JSON.stringify(update.blocks)).toContain('vendor ticket 42');
    expect(rig.slack.callsTo('chat.postMessage').length).toBe(posted);

    await rig.drain();
    expect(rig.slack.replies('CACME', root!.ts).filter((m) => m.metadata?.event_payload.event === 'owner_changed')).toHaveLength(1);
  });
});

describe('reassign that changes nothing', () => {
  it('the same team, person and note again records nothing, posts nothing and tells the clicker so', async () => {
    rig.slack.channelMembers.set('CACME', ['U0ALICE', 'U0BOB', 'U0CUST']);
    const alert = await openAlert(acmeWf.id);
    const submit = (note: string | null) =>
      rig.interact({
        type: 'view_submission',
        team: { id: 'T0TEST' },
        user: { id: 'U0ALICE' },
        api_app_id: 'A0TEST',
        view: {
          id: 'V1',
          callback_id: VIEW.reassign,
          private_metadata: JSON.stringify({ alertId: alert.id, channel: 'CACME' }),
          state: {
            values: {
              [REASSIGN_FIELD.team.block]: { [REASSIGN_FIELD.team.action]: { type: 'static_select', selected_option: { value: 'engineering' } } },
              [REASSIGN_FIELD.user.block]: { [REASSIGN_FIELD.user.action]: { type: 'users_select', selected_user: 'U0BOB' } },
              [REASSIGN_FIELD.note.block]: { [REASSIGN_FIELD.note.action]: { type: 'plain_text_input', value: note } },
            },
          },
        },
      });
    const ownerEvents = () => t.db.selectFrom('alertEvents').select('id').where('alertId', '=', alert.id).where('kind', '=', 'owner_changed').execute();
    expect((await submit('check the vendor')).status).toBe(200);
    await eventually(async () => expect(await ownerEvents()).toHaveLength(1));
    await rig.drain();
    const [root] = rig.slack.roots('CACME');
    const replies = rig.slack.replies('CACME', root!.ts).length;
    const acknowledgedAt = (await alertRow(alert.id)).acknowledgedAt;

    rig.clock.advance(60_000);
    const ephemeralsBefore = rig.slack.callsTo('chat.postEphemeral').length;
    expect((await submit('  check the vendor ')).status).toBe(200);
    const told = await eventually(() => rig.slack.callsTo('chat.postEphemeral')[ephemeralsBefore] ?? Promise.reject(new Error('no answer yet')));
    expect(told.args).toMatchObject({ channel: 'CACME', user: 'U0ALICE', text: expect.stringContaining('already') });
    expect(String(told.args.text)).toContain('<@U0BOB>');
    await rig.drain();
    expect(await ownerEvents()).toHaveLength(1);
    expect(rig.slack.replies('CACME', root!.ts)).toHaveLength(replies);
    expect((await alertRow(alert.id)).acknowledgedAt).toEqual(acknowledgedAt);
  });

  it('the modal opens with the current note, so submitting it untouched keeps the note', async () => {
    const alert = await openAlert(acmeWf.id);
    await t.db.updateTable('alerts').set({ ownerUser: 'U0BOB', acknowledgedAt: T0, ownerNote: 'check the vendor' }).where('id', '=', alert.id).execute();
    await rig.click({ actionId: ACTION.reassign, value: String(alert.id), channel: 'CACME' });
    const opened = await eventually(() => rig.slack.openedViews[0] ?? Promise.reject(new Error('no modal yet')));
    expect(JSON.stringify(opened.view)).toContain('"initial_value":"check the vendor"');
  });
});

describe('App Home', () => {
  it('a person in no tenant\'s channel is told so, not that nothing is broken', async () => {
    await openAlert(acmeWf.id);
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    await rig.event({ type: 'app_home_opened', user: 'U0NOBODY', channel: 'D0NOBODY', tab: 'home' });
    const home = await eventually(() => JSON.stringify(rig.slack.homeViews.get('U0NOBODY') ?? (() => { throw new Error('not yet'); })()));
    expect(home).not.toContain('nightly-pipeline');
    expect(home).not.toContain('Nothing is broken');
    expect(home).toContain("You aren't in any tenant's channel");
    await t.db.deleteFrom('slackHomeViews').execute();
  });

  it("lists the viewer's own alerts first, tenant and alert", async () => {
    const quality = await t.db.selectFrom('workflows').select('id').where('name', '=', 'quality-check').executeTakeFirstOrThrow();
    await openAlert(acmeWf.id);
    const mine = await openAlert(quality.id);
    const theirs = await openAlert(globexWf.id);
    await t.db.updateTable('alerts').set({ ownerUser: 'U0ALICE', acknowledgedAt: T0 }).where('id', 'in', [mine.id, theirs.id]).execute();
    // Alice is in both channels; Acme sorts before Globex and nightly-pipeline opened first.
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    rig.slack.channelMembers.set('CGLOBEX', ['U0ALICE']);
    await rig.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D0ALICE', tab: 'home' });
    const home = await eventually(() => JSON.stringify(rig.slack.homeViews.get('U0ALICE') ?? (() => { throw new Error('not yet'); })()));
    expect(home.indexOf('quality-check')).toBeGreaterThan(-1);
    expect(home.indexOf('quality-check')).toBeLessThan(home.indexOf('nightly-pipeline'));
    // Owning nothing in Acme any more, Alice sees Globex, where she owns one, first.
    await t.db.updateTable('alerts').set({ ownerUser: null, acknowledgedAt: null }).where('id', '=', mine.id).execute();
    rig.slack.homeViews.delete('U0ALICE');
    await rig.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D0ALICE', tab: 'home' });
    const again = await eventually(() => JSON.stringify(rig.slack.homeViews.get('U0ALICE') ?? (() => { throw new Error('not yet'); })()));
    expect(again.indexOf('globex-import')).toBeLessThan(again.indexOf('nightly-pipeline'));
    await t.db.deleteFrom('slackHomeViews').execute();
  });

  it("links each alert to its thread in the tenant's channel, built from the stored root (no Slack call)", async () => {
    const alert = await openAlert(acmeWf.id);
    const [root] = rig.slack.roots('CACME');
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    const calls = rig.slack.calls.length;
    await rig.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D0ALICE', tab: 'home' });
    const home = await eventually(() => JSON.stringify(rig.slack.homeViews.get('U0ALICE') ?? (() => { throw new Error('not yet'); })()));
    expect(home).toContain(`<https://slack.com/archives/CACME/p${root!.ts.replace('.', '')}|nightly-pipeline>`);
    expect(rig.slack.calls.slice(calls).map((c) => c.method).filter((m) => m !== 'conversations.members' && m !== 'auth.test')).toEqual(['views.publish']);
    // A thread only in the platform channel (the tenant's post went dead) is linked there.
    await t.db.deleteFrom('alertThreads').where('alertId', '=', alert.id).where('destination', '=', 'slack:CACME').execute();
    rig.slack.homeViews.delete('U0ALICE');
    await rig.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D0ALICE', tab: 'home' });
    const again = await eventually(() => JSON.stringify(rig.slack.homeViews.get('U0ALICE') ?? (() => { throw new Error('not yet'); })()));
    expect(again).toContain('<https://slack.com/archives/CPLAT/p');
    await t.db.deleteFrom('slackHomeViews').execute();
  });

  it('publishes the cross-tenant dashboard when opened, and again for that user when alert state changes', async () => {
    const alert = await openAlert(acmeWf.id);
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    const opened = rig.clock.now();
    await rig.event({ type: 'app_home_opened', user: 'U0ALICE', channel: 'D0ALICE', tab: 'home' });
    await eventually(() => expect(rig.slack.homeViews.get('U0ALICE')).toBeDefined());
    expect(JSON.stringify(rig.slack.homeViews.get('U0ALICE'))).toContain('nightly-pipeline');
    expect(await t.db.selectFrom('slackHomeViews').selectAll().execute()).toEqual([{ userId: 'U0ALICE', openedAt: opened }]);

    const publishes = () => rig.slack.callsTo('views.publish').length;
    await rig.drain(); // the refresher's first look
    const before = publishes();
    await addEvent(t.db, alert.id, 'escalated', { now: T0, platformChannel: 'CPLAT', changes: { severity: 'critical' } });
    await rig.drain();
    expect(publishes()).toBe(before + 1);
    expect(JSON.stringify(rig.slack.homeViews.get('U0ALICE'))).toContain('critical');
  });
});

/** The Reassign… form submitted by U0ALICE, as Slack sends it: team, user and note in the view's state. */
function reassignSubmission(privateMetadata: string, input: { team: string; user: string; note: string | null }) {
  return {
    type: 'view_submission',
    team: { id: 'T0TEST' },
    user: { id: 'U0ALICE' },
    api_app_id: 'A0TEST',
    view: {
      id: 'V1',
      callback_id: VIEW.reassign,
      private_metadata: privateMetadata,
      state: {
        values: {
          [REASSIGN_FIELD.team.block]: { [REASSIGN_FIELD.team.action]: { type: 'static_select', selected_option: { value: input.team } } },
          [REASSIGN_FIELD.user.block]: { [REASSIGN_FIELD.user.action]: { type: 'users_select', selected_user: input.user } },
          [REASSIGN_FIELD.note.block]: { [REASSIGN_FIELD.note.action]: { type: 'plain_text_input', value: input.note } },
        },
      },
    },
  };
}
