import { beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { ACTION, RESOLVE_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { submitResolve, usePeopleRig } from '../helpers/people-rig.js';

/** Resolve… on the root (a modal with a required note), and an alert opening critical pages the on-call (issue 13). */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

const people = usePeopleRig(START, './export');
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(() => void ({ t, engine, rig } = people));

const workflow = (cron: string) => people.workflow(cron);

async function failTick(wf: Workflow, tick: Date) {
  engine.clock.set(new Date(Math.max(tick.getTime() + minutes(2), engine.clock.now().getTime())));
  await fireTick(engine, wf, tick, { status: 'failed', error: 'connect ECONNREFUSED', stage: 'upload' });
  await engine.drain();
  await rig.drain();
}

const alertsOf = (wf: Workflow) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();
const rootOf = (alertId: number) =>
  rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alertId) ?? (() => { throw new Error(`no root for alert ${alertId}`); })();
const repliesOf = (alertId: number) => rig.slack.replies('CACME', rootOf(alertId).ts);

/** A click on the root message itself (the rig's click names a placeholder message). */
let clicks = 0;
function clickResolve(alertId: number, user: string) {
  const n = ++clicks;
  const ts = rootOf(alertId).ts;
  return rig.interact({
    type: 'block_actions',
    team: { id: 'T0TEST', domain: 'example' },
    user: { id: user, username: user, team_id: 'T0TEST' },
    api_app_id: 'A0TEST',
    token: 'legacy',
    container: { type: 'message', message_ts: ts, channel_id: 'CACME', is_ephemeral: false },
    trigger_id: `resolve-trigger-${n}`,
    channel: { id: 'CACME', name: 'alerts' },
    message: { type: 'message', ts, text: 'root' },
    response_url: rig.slack.responseUrl(`resolve${n}`),
    actions: [{ action_id: ACTION.resolve, block_id: 'alert_actions', action_ts: `${n}.0`, type: 'button', value: String(alertId) }],
  });
}

describe('Resolve… on the alert root', () => {
  it('opens a modal; an empty note is refused in the form; a note closes the alert, the root updates at once, the thread hears once', async () => {
    const wf = await workflow('0 * * * *');
    await failTick(wf, hour(1));
    await failTick(wf, hour(2));
    const [alert] = await alertsOf(wf);
    expect(JSON.stringify(rootOf(alert!.id).blocks)).toContain(ACTION.resolve);

    const viewsBefore = rig.slack.openedViews.length;
    await clickResolve(alert!.id, 'U0LEAD');
    const opened = await eventually(() => rig.slack.openedViews[viewsBefore] ?? Promise.reject(new Error('no modal yet')));
    const view = opened.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(VIEW.resolve);

    for (const empty of [null, '   ']) {
      const refused = await submitResolve(rig, view.private_metadata, 'U0LEAD', empty);
      expect(refused.status).toBe(200);
      expect(JSON.parse(refused.text)).toMatchObject({ response_action: 'errors', errors: { [RESOLVE_FIELD.note.block]: expect.stringContaining('note is required') } });
    }
    expect((await alertsOf(wf))[0]!.status).toBe('open');

    const posted = rig.slack.callsTo('chat.postMessage').length;
    const ok = await submitResolve(rig, view.private_metadata, 'U0LEAD', '  vendor restored the database ');
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    await eventually(async () => expect((await alertsOf(wf))[0]!.status).toBe('resolved'));
    const event = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', alert!.id).where('kind', '=', 'resolved').executeTakeFirstOrThrow();
    expect(event.actor).toBe('U0LEAD');
    expect(event.data).toMatchObject({ by: 'hand', note: 'vendor restored the database' });

    // The clicked root shows the outcome at once, before the paced outbox has posted anything.
    const update = await eventually(() => rig.slack.callsTo('chat.update').find((c) => c.channel === 'CACME' && c.ts === rootOf(alert!.id).ts) ?? Promise.reject(new Error('no update yet')));
    expect(JSON.stringify(update.blocks)).toContain('vendor restored the database');
    expect(JSON.stringify(update.blocks)).not.toContain(ACTION.resolve);
    expect(rig.slack.callsTo('chat.postMessage').length).toBe(posted);

    await rig.drain();
    await rig.drain();
    const told = repliesOf(alert!.id).filter((m) => m.metadata?.event_payload.event === 'resolved');
    expect(told).toHaveLength(1);
    expect(told[0]!.text).toContain('<@U0LEAD> resolved the alert by hand');
    expect(told[0]!.text).toContain('vendor restored the database');

    await failTick(wf, hour(3));
    await failTick(wf, hour(4));
    const alerts = await alertsOf(wf);
    expect(alerts.map((a) => a.status)).toEqual(['resolved', 'open']);
    expect(rootOf(alerts[1]!.id).ts).not.toBe(rootOf(alert!.id).ts);
  });

  it('a non-admin is refused, told whom to ask, at the click and at a submission', async () => {
    const wf = await workflow('30 * * * *');
    await failTick(wf, new Date(hour(1).getTime() + minutes(30)));
    await failTick(wf, new Date(hour(2).getTime() + minutes(30)));
    const [alert] = await alertsOf(wf);

    const viewsBefore = rig.slack.openedViews.length;
    const responsesBefore = rig.slack.responses.length;
    await clickResolve(alert!.id, 'U0BOB');
    const refusal = await eventually(() => {
      const r = rig.slack.responses.slice(responsesBefore).find((x) => x.body.response_type === 'ephemeral');
      if (!r) throw new Error('no answer yet');
      return String(r.body.text);
    });
    expect(refusal).toContain("Only Acme's admins can resolve by hand");
    expect(refusal).toContain('<@U0LEAD>');
    expect(rig.slack.openedViews.length).toBe(viewsBefore);

    // A form opened by an admin but submitted by someone else is refused too (the rights are checked again).
    const metadata = JSON.stringify({ alertId: alert!.id, channel: 'CACME', messageTs: rootOf(alert!.id).ts });
    const ephemeralsBefore = rig.slack.callsTo('chat.postEphemeral').length;
    await submitResolve(rig, metadata, 'U0BOB', 'looks fine to me');
    const told = await eventually(() => rig.slack.callsTo('chat.postEphemeral')[ephemeralsBefore] ?? Promise.reject(new Error('no answer yet')));
    expect(String(told.args.text)).toContain('<@U0LEAD>');
    expect((await alertsOf(wf))[0]!.status).toBe('open');
  });
});

describe('an alert that opens critical pages a person', () => {
  it("a daily job's opening is a broadcast reply mentioning the on-call group; the root is posted once", async () => {
    const wf = await workflow('0 3 * * *');
    for (let day = 0; day < 3 && (await alertsOf(wf)).length === 0; day++) await failTick(wf, new Date(hour(3).getTime() + day * 24 * 3_600_000));
    const [alert] = await alertsOf(wf);
    expect(alert!.severity).toBe('critical');
    const event = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', alert!.id).where('kind', '=', 'opened').executeTakeFirstOrThrow();
    expect(event.data).toMatchObject({ mention: { users: [], groups: ['SONCALL'] } });

    const root = rootOf(alert!.id);
    expect(rig.slack.roots('CACME').filter((m) => m.metadata?.event_payload.alert_id === alert!.id)).toHaveLength(1);
    const pages = repliesOf(alert!.id).filter((m) => m.metadata?.event_payload.event === 'opened');
    expect(pages).toHaveLength(1);
    expect(pages[0]!.text).toContain('Critical alert opened');
    expect(pages[0]!.text).toContain('<!subteam^SONCALL>');
    const call = rig.slack.callsTo('chat.postMessage').find((c) => c.ts === pages[0]!.ts)!;
    expect(call.threadTs).toBe(root.ts);
    expect(String(call.args.reply_broadcast)).toBe('true');
  });

  it('a warning opening stays a root alone, paging nobody', async () => {
    const wf = await workflow('15 * * * *');
    await failTick(wf, new Date(hour(1).getTime() + minutes(15)));
    await failTick(wf, new Date(hour(2).getTime() + minutes(15)));
    const [alert] = await alertsOf(wf);
    expect(alert!.severity).toBe('warning');
    expect(repliesOf(alert!.id).filter((m) => m.metadata?.event_payload.event === 'opened')).toHaveLength(0);
  });
});
