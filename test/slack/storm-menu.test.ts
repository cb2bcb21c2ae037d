import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/db/schema.js';
import { loadDigestFacts } from '../../src/services/digest-queries.js';
import { buildDigest } from '../../src/slack/blocks/digest.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { ACTION, stormBlockId } from '../../src/slack/blocks/ids.js';
import { homeModel } from '../../src/slack/views/queries.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/** Each alert inside a storm message stays ownable: its ⋯ menu, clicked through the signed-request rig. */
const TICK = new Date('2026-03-10T02:00:00Z');

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
let alerts: Alert[];
let stormId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, new Date(TICK.getTime() + 60_000));
  rig = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  for (let i = 0; i < 6; i++) {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: `load-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1 }) });
    await reportRun(t.db, wf, TICK, { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
  }
  await engine.drain();
  await rig.drain();
  alerts = await t.db.selectFrom('alerts').selectAll().orderBy('id').execute();
  stormId = (await t.db.selectFrom('storms').select('id').where('destination', '=', 'slack:CACME').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

const stormMessage = () => rig.slack.roots('CACME')[0]!;
const menu = (alert: Alert, choice: string, channel = 'CACME', user = 'U0ALICE') =>
  rig.click({ actionId: ACTION.stormAlertMenu, blockId: stormBlockId(stormId, alert.id), selected: `${alert.id}:${choice}`, channel, user });
const alertNow = (a: Alert) => t.db.selectFrom('alerts').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();

describe('the storm message menu', { timeout: 60_000 }, () => {
  it('six alerts at once are one storm message, each alert with its own menu', async () => {
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    const blocks = stormMessage().blocks as { block_id?: string; accessory?: { action_id: string; options: { value: string }[] } }[];
    const members = blocks.filter((b) => b.block_id?.startsWith('storm:'));
    expect(members.map((b) => b.block_id)).toEqual(alerts.map((a) => stormBlockId(stormId, a.id)));
    expect(members[0]!.accessory!.action_id).toBe(ACTION.stormAlertMenu);
    expect(members[0]!.accessory!.options.map((o) => o.value)).toEqual([`${alerts[0]!.id}:take`, `${alerts[0]!.id}:silence:1h`, `${alerts[0]!.id}:silence:resolved`, `${alerts[0]!.id}:resolve`]);
  });

  it('Take ownership acts on that alert alone and answers with the storm message re-rendered in place; no post', async () => {
    const posts = rig.slack.callsTo('chat.postMessage').length;
    const responses = rig.slack.responses.length;
    const res = await menu(alerts[2]!, 'take');
    expect(res.status).toBe(200);
    await eventually(async () => expect((await alertNow(alerts[2]!)).ownerUser).toBe('U0ALICE'));
    expect((await alertNow(alerts[1]!)).ownerUser).toBeNull();
    const answer = await eventually(() => rig.slack.responses.slice(responses).find((r) => r.body.replace_original === true) ?? Promise.reject(new Error('no answer yet')));
    expect(JSON.stringify(answer.body.blocks)).toMatch(/load-2\*[^"]*owner <@U0ALICE>/);
    await rig.drain();
    expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(posts);
    expect(JSON.stringify(stormMessage().blocks)).toMatch(/load-2\*[^"]*owner <@U0ALICE>/);
  });

  it('Silence and Resolve… work from the menu too (Resolve… opens the modal)', async () => {
    await menu(alerts[3]!, 'silence:1h');
    await eventually(async () => expect((await alertNow(alerts[3]!)).silencedBy).toBe('U0ALICE'));
    const views = rig.slack.openedViews.length;
    await menu(alerts[4]!, 'resolve');
    const opened = await eventually(() => rig.slack.openedViews[views] ?? Promise.reject(new Error('no modal yet')));
    expect(JSON.parse((opened.view as { private_metadata: string }).private_metadata)).toMatchObject({ alertId: alerts[4]!.id, channel: 'CACME', messageTs: null });
  });

  it("another tenant's channel cannot act on these alerts, and a malformed choice is refused in words", async () => {
    const responses = rig.slack.responses.length;
    await menu(alerts[5]!, 'take', 'CGLOBEX', 'U0MALLORY');
    const refused = await eventually(() => rig.slack.responses.slice(responses).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
    expect(String(refused.body.text)).toMatch(/not found|can't find|cannot find/i);
    expect((await alertNow(alerts[5]!)).ownerUser).toBeNull();

    const before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.stormAlertMenu, blockId: stormBlockId(stormId, alerts[5]!.id), selected: `${alerts[5]!.id}:delete`, channel: 'CACME' });
    const bad = await eventually(() => rig.slack.responses.slice(before).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
    expect(String(bad.body.text)).toContain("couldn't read that click");
    expect((await alertNow(alerts[5]!)).ownerUser).toBeNull();
  });

  it('a menu choice that fails for a reason not the database\'s (a bug) is answered with a log reference, not silence', async () => {
    await sql.raw(`create function storm_menu_broken() returns trigger language plpgsql as $$ begin raise exception 'internal detail'; end $$;
      create trigger storm_menu_broken before update on alerts for each row execute function storm_menu_broken();`).execute(t.db);
    try {
      const before = rig.slack.responses.length;
      await menu(alerts[5]!, 'take');
      const answer = await eventually(() => rig.slack.responses.slice(before).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
      expect(String(answer.body.text)).toMatch(/^Something went wrong on my side answering that \(reference `[0-9a-f]{8}`/);
      expect(String(answer.body.text)).not.toContain('internal detail');
    } finally {
      await sql.raw('drop trigger storm_menu_broken on alerts; drop function storm_menu_broken()').execute(t.db);
    }
    expect((await alertNow(alerts[5]!)).ownerUser).toBeNull();
  });

  it('an answer that lands after the refresher showed a newer state is followed by the newest state again', async () => {
    const stormTs = stormMessage().ts;
    const updates = () => rig.slack.callsTo('chat.update').filter((c) => c.ts === stormTs);
    const release = rig.slack.holdResponses();
    const responses = rig.slack.responses.length;
    await menu(alerts[0]!, 'take');
    await eventually(async () => expect((await alertNow(alerts[0]!)).ownerUser).toBe('U0ALICE'));
    // While the answer is held, another member fails again and the refresher shows it.
    const wf = await t.db.selectFrom('workflows').selectAll().where('id', '=', alerts[1]!.workflowId).executeTakeFirstOrThrow();
    engine.clock.advance(3_600_000);
    await reportRun(t.db, wf, new Date(TICK.getTime() + 3_600_000), { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
    await engine.drain();
    await rig.drain();
    expect(JSON.stringify(updates().at(-1)?.blocks)).toMatch(/load-1\*[^"]*2 failures/);
    release();
    await eventually(() => rig.slack.responses.slice(responses).find((r) => r.body.replace_original === true) ?? Promise.reject(new Error('no answer yet')));
    const atAnswer = updates().length;
    const again = await eventually(async () => {
      await rig.drain();
      return updates().slice(atAnswer).at(-1) ?? Promise.reject(new Error('storm message not rendered again'));
    });
    expect(JSON.stringify(again.blocks)).toMatch(/load-1\*[^"]*2 failures/);
    expect(JSON.stringify(again.blocks)).toMatch(/load-0\*[^"]*owner <@U0ALICE>/);
  });

  it('/scheduler status and the App Home name the storm under way; another tenant sees none', async () => {
    const before = rig.slack.responses.length;
    await rig.command('status', { channel: 'CACME' });
    const status = await eventually(() => rig.slack.responses[before] ?? Promise.reject(new Error('no answer yet')));
    expect(JSON.stringify(status.body)).toMatch(/Storm since .*6 alerts \(\d open\) are one message in <#CACME>/);
    const other = rig.slack.responses.length;
    await rig.command('status', { channel: 'CGLOBEX' });
    const globex = await eventually(() => rig.slack.responses[other] ?? Promise.reject(new Error('no answer yet')));
    expect(JSON.stringify(globex.body)).not.toContain('Storm');

    const home = renderHome(await homeModel(t.db, engine.clock.now(), ['acme']), engine.clock.now());
    expect(JSON.stringify(home.blocks)).toMatch(/Storm since .*6 alerts/);
    // Its alerts have no root of their own in the tenant's channel: each links to the storm message there.
    const storm = await t.db.selectFrom('storms').select(['channel', 'rootTs']).where('channel', '=', 'CACME').executeTakeFirstOrThrow();
    const link = `https://slack.com/archives/CACME/p${storm.rootTs!.replace('.', '')}|`;
    expect(JSON.stringify(home.blocks).split(link).length - 1).toBe(6);
    expect(JSON.stringify(renderHome(await homeModel(t.db, engine.clock.now(), ['globex']), engine.clock.now()).blocks)).not.toContain('Storm');
  });

  it("the tenant's digest mentions the storm", async () => {
    const facts = await loadDigestFacts(t.db, 'acme', new Date(TICK.getTime() - 86_400_000), engine.clock.now());
    expect(facts!.storms).toEqual([{ startedAt: new Date(TICK.getTime() + 60_000), endedAt: null, alerts: 6 }]);
    const digest = buildDigest(facts!)!;
    expect(digest.plainText).toContain('Storms\n- storm at 2026-03-10 02:01 UTC: 6 alerts at once, told as one message, still under way');
    expect((await loadDigestFacts(t.db, 'globex', new Date(TICK.getTime() - 86_400_000), engine.clock.now()))!.storms).toEqual([]);
  });

  it('escalations to critical inside a storm page once: one broadcast reply in the storm message thread, the others shown in the message', async () => {
    const open = await t.db.selectFrom('alerts').selectAll().where('status', '=', 'open').where('ownerUser', 'is', null).where('silencedUntil', 'is', null).execute();
    expect(open.length).toBeGreaterThan(0);
    const latest = Math.max(...open.map((a) => a.escalateAt!.getTime()));
    engine.clock.set(new Date(latest + 60_000));
    await runEscalationClock(engine.deps);
    await rig.drain();
    const escalated = await t.db.selectFrom('alertEvents').select('alertId').where('kind', '=', 'escalated').execute();
    const ids = escalated.map((e) => Number(e.alertId)).sort();
    expect(ids).toEqual(expect.arrayContaining(open.map((a) => Number(a.id))));
    const pages = rig.slack.callsTo('chat.postMessage').filter((c) => c.channel === 'CACME' && c.metadata?.event_payload.event === 'escalated');
    // Was: one broadcast page per member, all at once. The on-call paged once, the storm message shows each critical.
    expect(ids.length).toBeGreaterThan(1);
    expect(pages).toHaveLength(1);
    expect(ids).toContain(pages[0]!.metadata!.event_payload.alert_id);
    for (const page of pages) {
      expect(page.threadTs).toBe(stormMessage().ts);
      expect(String(page.args.reply_broadcast)).toBe('true');
    }
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });
});
