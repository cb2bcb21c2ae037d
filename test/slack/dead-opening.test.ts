import { describe, expect, it } from 'vitest';
import { ownReplyKey } from '../../src/domain/events.js';
import { LIMITS } from '../../src/slack/blocks/limits.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { renderOutageNotice } from '../../src/slack/blocks/outage-notice.js';
import type { OutageNotice } from '../../src/notify/sender.js';
import { homeModel } from '../../src/slack/views/queries.js';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * An alert's opening refused for good (the channel archived: `is_archived`,
 * a permanent answer; a refused token is not one, see revoked-token.test.ts),
 * and what follows once the channel takes posts again: the opening goes dead
 * at once; the escalation, finding no thread, posts the alert's root and then
 * its page under it. The two messages of that one row carry distinct keys,
 * so neither is sent twice and a page whose outcome was unknown is looked for
 * as itself, not found as the root.
 */

let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; } });

const key = (m: StoredMessage) => m.metadata?.event_payload.key as string | undefined;
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** An alert whose opening met an archived channel: its row dead after one attempt, nothing in Slack. */
async function openingKilledByArchivedChannel(r: OutboxRig) {
  const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
  r.slack.failNext({ kind: 'platform_error', error: 'is_archived' }, { method: 'chat.postMessage' });
  await addEvent(t.db, alert.id, 'opened', { now: at(0) });
  await r.drain();
  const opening = await t.db.selectFrom('notifications').selectAll().where('alertId', '=', alert.id).executeTakeFirstOrThrow();
  expect(opening).toMatchObject({ status: 'dead', attempts: 1, lastError: 'is_archived' });
  expect(r.slack.messages()).toEqual([]);
  return alert;
}

async function rowsOf(alertId: number) {
  return t.db.selectFrom('notifications').selectAll().where('alertId', '=', alertId).orderBy('id').execute();
}

/** The escalation's root and its broadcast page, each key once; then the recovery, a reply of its own. */
async function expectRootPageAndRecovery(r: OutboxRig, alertId: number) {
  await addEvent(t.db, alertId, 'resolved', { now: at(60), changes: { status: 'resolved', resolvedAt: at(60) } });
  await r.drain();
  const [, escalated, resolved] = await rowsOf(alertId);
  expect([escalated!.status, resolved!.status]).toEqual(['sent', 'sent']);
  const roots = r.slack.roots('CACME');
  expect(roots.map(key)).toEqual([escalated!.idempotencyKey]);
  const replies = r.slack.replies('CACME', roots[0]!.ts);
  expect(replies.map(key)).toEqual([ownReplyKey(escalated!.idempotencyKey), resolved!.idempotencyKey]);
  expect(replies.map((m) => m.metadata?.event_payload.event)).toEqual(['escalated', 'resolved']);
  const page = r.slack.callsTo('chat.postMessage').find((c) => c.ts === replies[0]!.ts)!;
  expect(String(page.args.reply_broadcast)).toBe('true');
  // Nothing in Slack twice: every message has a key of its own.
  const keys = r.slack.messages().map(key);
  expect(new Set(keys).size).toBe(keys.length);
}

describe('an opening that went dead', () => {
  it('kills the opening at once; the escalation posts the root and one page under it, keys distinct, thread in order', async () => {
    rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 } });
    const alert = await openingKilledByArchivedChannel(rig);
    await addEvent(t.db, alert.id, 'escalated', { now: at(30), changes: { severity: 'critical', escalatedAt: at(30) } });
    await rig.drain();
    await expectRootPageAndRecovery(rig, alert.id);
  });

  it('a page whose answer never came is looked for as itself and posted once', async () => {
    rig = await startOutboxRig(t.db, { timeoutMs: 300 });
    const alert = await openingKilledByArchivedChannel(rig);
    // The root goes out; the page's request fails with nothing stored and no answer (an unknown outcome).
    rig.slack.failNext({ kind: 'http_500' }, { method: 'chat.postMessage', inThread: true });
    await addEvent(t.db, alert.id, 'escalated', { now: at(30), changes: { severity: 'critical', escalatedAt: at(30) } });
    await rig.drain();
    expect(rig.slack.callsTo('chat.postMessage').map((c) => c.outcome)).toEqual(['is_archived', 'ok', 'http_500', 'ok']);
    await expectRootPageAndRecovery(rig, alert.id);
  });

  it('a root whose answer was lost is found in the channel, and its page still goes out once', async () => {
    rig = await startOutboxRig(t.db, { timeoutMs: 300 });
    const alert = await openingKilledByArchivedChannel(rig);
    // Slack keeps the root but the answer never arrives.
    rig.slack.failNext({ kind: 'lost' }, { method: 'chat.postMessage', inThread: false });
    await addEvent(t.db, alert.id, 'escalated', { now: at(30), changes: { severity: 'critical', escalatedAt: at(30) } });
    await rig.drain();
    expect(rig.slack.callsTo('chat.postMessage').map((c) => c.outcome)).toEqual(['is_archived', 'lost', 'ok']);
    await expectRootPageAndRecovery(rig, alert.id);
  });
});

describe('a page after the storm message its row posted', () => {
  it('is still posted, once, when the storm message was kept but its answer lost', async () => {
    rig = await startOutboxRig(t.db, { timeoutMs: 300 });
    rig.slack.failNext({ kind: 'lost' }, { method: 'chat.postMessage', inThread: false });
    const mention = { users: ['U0ONCALL'], groups: [] };
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id, { severity: 'critical' });
      await addEvent(t.db, alert.id, 'opened', { now: at(i), storms: true, data: { mention } });
      keys.push((await rowsOf(alert.id))[0]!.idempotencyKey);
    }
    await rig.drain();
    const roots = rig.slack.roots('CACME');
    expect(roots.map(key)).toEqual([expect.stringMatching(/^storm:/)]);
    // The first critical opening pages under the storm message, once; the others page the same on-call moments
    // later and fold into the message (stormPageFolds).
    expect(rig.slack.replies('CACME', roots[0]!.ts).map(key)).toEqual([keys[0]]);
  });
});

describe('the App Home after undeliverable notifications', () => {
  it('counts every dead notification, lists the newest, and keeps them in view however many alerts are open', async () => {
    rig = await startOutboxRig(t.db);
    rig.slack.failNext({ kind: 'platform_error', error: 'channel_not_found' }, { method: 'chat.postMessage', times: 35 });
    for (let i = 0; i < 35; i++) {
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: at(i) });
    }
    await rig.drain();
    const model = await homeModel(t.db, at(60), ['acme']);
    expect(model.dead).toHaveLength(30);
    expect(model.deadCount).toBe(35);
    const text = JSON.stringify(renderHome(model, at(60)).blocks);
    expect(text).toContain('Undeliverable notifications* (35)');
    expect(text).toContain('and 5 older, not listed here');
    // 150 tenants' open alerts fill the surface: they give way, the undeliverable list stays.
    const crowded = renderHome({ ...model, tenants: Array.from({ length: 150 }, (_, i) => ({ id: `t${i}`, name: `T${i}`, alerts: model.tenants[0]!.alerts.slice(0, 3) })) }, at(60));
    expect(crowded.blocks.length).toBeLessThanOrEqual(LIMITS.surfaceBlocks);
    expect(JSON.stringify(crowded.blocks)).toContain('Undeliverable notifications* (35)');
    expect(JSON.stringify(crowded.blocks)).toMatch(/more not shown/);
  });
});

describe('a channel refusing for good is told to the platform', () => {
  /** An alert of its own whose opening goes to CACME at `when`, answered `error` (or delivered). */
  async function openingAt(r: OutboxRig, when: Date, error?: string) {
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    if (error) r.slack.failNext({ kind: 'platform_error', error }, { method: 'chat.postMessage' });
    r.clock.set(when);
    await addEvent(t.db, alert.id, 'opened', { now: when });
    await r.drain();
    return (await rowsOf(alert.id))[0]!;
  }

  it('once when its first notification goes dead, with what to do; again a day later if it still refuses; at once again after a delivery', async () => {
    const notices: OutageNotice[] = [];
    rig = await startOutboxRig(t.db, { sender: { onOutage: async (n) => void notices.push(n) } });
    expect((await openingAt(rig, at(0), 'not_in_channel')).status).toBe('dead');
    expect(notices.map((n) => [n.kind, n.destination, n.outage.lastError, n.outage.failures])).toEqual([['dead', 'slack:CACME', 'not_in_channel', 1]]);
    const text = renderOutageNotice(notices[0]!).text;
    expect(text).toContain('slack:CACME refuses notifications for good (not_in_channel)');
    expect(text).toContain('invite it there');

    // More refusals the same day: counted, not told again.
    await openingAt(rig, at(3600), 'not_in_channel');
    await openingAt(rig, at(7200), 'not_in_channel');
    expect(notices).toHaveLength(1);
    // A day after the notice, still refusing: told again, with the count since the first.
    await openingAt(rig, at(24 * 3600 + 1), 'not_in_channel');
    expect(notices.map((n) => [n.kind, n.outage.failures])).toEqual([['dead', 1], ['dead', 4]]);
    expect(renderOutageNotice(notices[1]!).text).toContain('4 notifications (since 1d ago) went dead there');

    // Invited: a delivery ends the refusal, so the next one (kicked out again) is told at once.
    expect((await openingAt(rig, at(24 * 3600 + 60))).status).toBe('sent');
    expect(await t.db.selectFrom('destinationRefusals').selectAll().execute()).toEqual([]);
    await openingAt(rig, at(24 * 3600 + 120), 'channel_not_found');
    expect(notices.map((n) => [n.kind, n.outage.lastError, n.outage.failures])).toEqual([['dead', 'not_in_channel', 1], ['dead', 'not_in_channel', 4], ['dead', 'channel_not_found', 1]]);
    expect(renderOutageNotice(notices[2]!).text).toContain('check the channel id in the workflows file');
  });
});
