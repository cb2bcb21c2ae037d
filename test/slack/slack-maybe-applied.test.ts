import { describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * Unknown outcomes settled by looking for the row's key. Slack's `internal_error` and `fatal_error` say "it's possible some aspect of
 * the operation succeeded before the error was raised": a post answered with
 * one of them may be in the channel, so its outcome is unknown and the sender
 * looks for its key before posting again.
 */
let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; } });

const keyOf = (m: StoredMessage) => m.metadata?.event_payload.key as string | undefined;

describe('a post Slack answers internal_error or fatal_error after storing it', () => {
  for (const error of ['internal_error', 'fatal_error']) {
    it(`${error} on a root: found by its key in the channel, never posted twice`, async () => {
      rig = await startOutboxRig(t.db);
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0 });
      rig.slack.failNext({ kind: 'applied_error', error }, { method: 'chat.postMessage' });
      await rig.drain();

      expect(rig.slack.roots('CACME')).toHaveLength(1);
      expect(rig.slack.callsTo('chat.postMessage').map((c) => c.outcome)).toEqual([error]);
      const row = await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'sent', result: expect.objectContaining({ recovered: true }) });
    });

    it(`${error} on a reply: found in the thread, the next reply after it, each once`, async () => {
      rig = await startOutboxRig(t.db);
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0 });
      await rig.drain();
      await addEvent(t.db, alert.id, 'escalated', { now: rig.clock.now(), changes: { severity: 'critical', escalatedAt: rig.clock.now() } });
      await addEvent(t.db, alert.id, 'resolved', { now: rig.clock.now(), changes: { status: 'resolved', resolvedAt: rig.clock.now() } });
      rig.slack.failNext({ kind: 'applied_error', error }, { method: 'chat.postMessage', inThread: true });
      await rig.drain();

      const [root] = rig.slack.roots('CACME');
      const replies = rig.slack.replies('CACME', root!.ts);
      expect(replies.map((m) => m.metadata?.event_payload.event)).toEqual(['escalated', 'resolved']);
      expect(new Set(rig.slack.messages('CACME').map(keyOf)).size).toBe(3);
    });
  }
});

describe('a root whose answer was lost, replied to by a person before the sender looks', () => {
  it('is found by its key though Slack now shows it as a thread parent (thread_ts = its ts), and not posted again', async () => {
    rig = await startOutboxRig(t.db);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    rig.slack.failNext({ kind: 'lost' }, { method: 'chat.postMessage' });
    await rig.sender.tick();
    const [root] = rig.slack.roots('CACME');
    expect(await t.db.selectFrom('notifications').select('status').executeTakeFirstOrThrow()).toEqual({ status: 'sending' });
    // Someone in the channel answers in the root's thread (their own client, their own token).
    const human = await fetch(`${rig.slack.url}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer xoxp-someone' },
      body: JSON.stringify({ channel: 'CACME', thread_ts: root!.ts, text: 'looking' }),
    });
    expect(await human.json()).toMatchObject({ ok: true });
    await rig.drain();

    expect(rig.slack.roots('CACME')).toHaveLength(1);
    expect(await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow()).toMatchObject({ status: 'sent', result: expect.objectContaining({ ts: root!.ts, recovered: true }) });
  });
});


describe('a storm message whose post failed unanswered, and was not kept', () => {
  it('is posted by the same row as soon as the lookup finds it missing, not a minute later', async () => {
    rig = await startOutboxRig(t.db);
    rig.slack.failNext({ kind: 'http_500' }, { method: 'chat.postMessage', inThread: false });
    for (let i = 0; i < 5; i++) {
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0, storms: true });
    }
    await rig.drain();

    const posts = rig.slack.callsTo('chat.postMessage');
    expect(posts.map((c) => c.outcome)).toEqual(['http_500', 'ok']);
    expect(rig.slack.roots('CACME').map(keyOf)).toEqual([expect.stringMatching(/^storm:/)]);
    // One back-off (1 s) and the lookup, not the storm claim's one-minute lease.
    expect(posts[1]!.at.getTime() - posts[0]!.at.getTime()).toBeLessThan(5000);
    expect(await t.db.selectFrom('notifications').select('status').where('status', '<>', 'sent').execute()).toEqual([]);
  });
});
