import { describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../src/replay/recording-slack-api.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';
import { stormKey } from '../../src/domain/storm.js';
import { renderStormMessage } from '../../src/slack/blocks/storm-message.js';
import { stormMetadata } from '../../src/slack/transport/metadata.js';
import { loadStormView, saveStormRoot } from '../../src/slack/views/storm-queries.js';

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

/** Five openings at once in acme's channel: one storm, its first two members' rows (x, y), and the rig's clock. */
async function stormOfFive() {
  // A storm of the file's earlier tests would take these openings in (one storm per channel at a time).
  await t.db.deleteFrom('stormAlerts').execute();
  await t.db.deleteFrom('storms').execute();
  rig = await startOutboxRig(t.db);
  for (let i = 0; i < 5; i++) {
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0, storms: true });
  }
  const storm = await t.db.selectFrom('storms').selectAll().executeTakeFirstOrThrow();
  const [x, y] = await t.db.selectFrom('notifications').select('id').orderBy('id').execute();
  return { storm, x: x!, y: y!, now: rig.clock.now(), rig };
}

describe('a storm member whose earlier attempt is unknown, looked up while another replica posts the storm message', () => {
  /**
   * The revoked-token chaos run's two duplicated keys (storm:3, storm:6): a
   * destination's rows can be in flight on two replicas at once (the claim
   * keeps one per destination per replica). Replica A held member X's row and
   * the storm's post claim and was posting; replica B's member Y, `sending`
   * after an unknown outcome, looked the storm message up before A's post had
   * landed, found nothing, and dropped the claim as if it were its own: B
   * claimed the post again and posted a second storm message. Replica A is
   * played here by the test, at the state it is in mid-post and at the post itself.
   */
  it("does not drop the other replica's claim: the storm message is posted once", async () => {
    const { storm, x, y, now, rig: outbox } = await stormOfFive();
    rig = outbox;
    // Replica A: X's row leased to it, the storm's post claimed, its chat.postMessage on the way.
    await t.db.updateTable('notifications').set({ status: 'sending', leaseOwner: 'replica-a', leaseExpiresAt: new Date(now.getTime() + 60_000) }).where('id', '=', x!.id).execute();
    await t.db.updateTable('storms').set({ rootClaimedAt: now }).where('id', '=', storm.id).execute();
    // Y's earlier attempt on another replica ended unknown: `sending`, lease dropped, looked up first.
    await t.db.updateTable('notifications').set({ status: 'sending', leaseOwner: null, leaseExpiresAt: null }).where('id', '=', y!.id).execute();

    await rig.sender.tick();
    // Y looked, found nothing (A's post has not landed), and left A's claim alone: it posted nothing.
    expect(rig.slack.calls.map((c) => c.method)).toEqual(['conversations.history']);

    // A's post lands, and A records it.
    const view = (await loadStormView(t.db, Number(storm.id), now))!;
    const key = stormKey(Number(storm.id), storm.destination);
    const posted = await rig.api.postMessage({ channel: 'CACME', ...renderStormMessage(view), metadata: stormMetadata(view, key)! });
    if (!posted.ok) throw new Error(posted.error);
    await saveStormRoot(t.db, Number(storm.id), posted.ts, view.eventId, now);
    await t.db.updateTable('notifications').set({ status: 'sent', sentAt: now, result: JSON.stringify({ ts: posted.ts, storm: Number(storm.id), root: true }), leaseOwner: null, leaseExpiresAt: null }).where('id', '=', x!.id).execute();
    await rig.drain();

    expect(rig.slack.roots('CACME').map(keyOf)).toEqual([key]);
    expect(await t.db.selectFrom('notifications').select('status').where('status', '<>', 'sent').execute()).toEqual([]);
  });
});

describe('a storm member whose storm message another delivery is posting', () => {
  it('waits a second and tries again, without holding the channel as if it were failing', async () => {
    const { storm, x, y, now, rig: outbox } = await stormOfFive();
    rig = outbox;
    // Another replica holds X's row and the storm's post claim, posting it right now.
    await t.db.updateTable('notifications').set({ status: 'sending', leaseOwner: 'replica-a', leaseExpiresAt: new Date(now.getTime() + 60_000) }).where('id', '=', x!.id).execute();
    await t.db.updateTable('storms').set({ rootClaimedAt: now }).where('id', '=', storm.id).execute();

    await rig.sender.tick();
    const waiting = await t.db.selectFrom('notifications').selectAll().where('id', '=', y!.id).executeTakeFirstOrThrow();
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0, lastError: `storm ${storm.id}'s message is being posted by another delivery` });
    expect(waiting.nextAttemptAt.getTime() - rig.clock.now().getTime()).toBeLessThanOrEqual(1000);
    // Not an outage of the channel: nothing held, no back-off growing while the other delivery finishes.
    expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
    expect(rig.slack.callsTo('chat.postMessage')).toEqual([]);
  });
});

describe('a storm message posted by a replica that died before recording it', () => {
  it('is looked up, not posted again, by the member that takes over the expired claim', async () => {
    const { storm, x, now, rig: outbox } = await stormOfFive();
    rig = outbox;
    // The dead replica: X's row leased to it (renewed at the send, so it outlives the storm claim), the claim, its post landed.
    const view = (await loadStormView(t.db, Number(storm.id), now))!;
    const key = stormKey(Number(storm.id), storm.destination);
    const posted = await rig.api.postMessage({ channel: 'CACME', ...renderStormMessage(view), metadata: stormMetadata(view, key)! });
    if (!posted.ok) throw new Error(posted.error);
    await t.db.updateTable('notifications').set({ status: 'sending', leaseOwner: 'replica-dead', leaseExpiresAt: new Date(now.getTime() + 65_000) }).where('id', '=', x.id).execute();
    await t.db.updateTable('storms').set({ rootClaimedAt: now }).where('id', '=', storm.id).execute();

    // The claim has expired, X's lease not yet: another member takes the claim over.
    rig.clock.set(new Date(now.getTime() + 61_000));
    await rig.sender.tick();
    expect(rig.slack.roots('CACME').map(keyOf)).toEqual([key]);
    expect(await t.db.selectFrom('storms').select('rootTs').where('id', '=', storm.id).executeTakeFirstOrThrow()).toEqual({ rootTs: posted.ts });

    rig.clock.set(new Date(now.getTime() + 70_000));
    await rig.drain();
    expect(rig.slack.roots('CACME').map(keyOf)).toEqual([key]);
    expect(await t.db.selectFrom('notifications').select('status').where('status', '<>', 'sent').execute()).toEqual([]);
  });
});

describe('a lookup takes no slot of the channel posting pace', () => {
  /**
   * An opening whose post meets `fault`, left `sending`; once its destination's back-off has run out,
   * another replica has just posted in the channel: the shared slot is taken for the next 30 s.
   */
  async function cutPostWhilePaceTakenElsewhere(fault: 'lost' | 'reset') {
    rig = await startOutboxRig(t.db);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    rig.slack.failNext({ kind: fault }, { method: 'chat.postMessage' });
    await rig.sender.tick();
    const row = await t.db.selectFrom('notifications').select(['status', 'nextAttemptAt']).executeTakeFirstOrThrow();
    expect(row.status).toBe('sending');
    rig.clock.set(new Date(Math.max(row.nextAttemptAt.getTime(), rig.clock.now().getTime()) + 61_000));
    await t.db.deleteFrom('destinationOutages').execute();
    await t.db.deleteFrom('paceSlots').execute();
    await t.db.insertInto('paceSlots').values({ key: 'slack:CACME', nextAt: new Date(rig.clock.now().getTime() + 30_000), updatedAt: rig.clock.now() }).execute();
    await rig.sender.tick();
    return rig;
  }

  it('a post whose answer was lost is found delivered at once while another replica holds the pace, without waiting for a slot', async () => {
    const { slack } = await cutPostWhilePaceTakenElsewhere('lost');
    expect(await t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow()).toMatchObject({ status: 'sent', result: expect.objectContaining({ recovered: true }) });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('a post refused before Slack stored it is looked up once; found missing, it waits for the slot as pending and is then posted without a second lookup', async () => {
    const { slack, drain } = await cutPostWhilePaceTakenElsewhere('reset');
    expect(await t.db.selectFrom('notifications').select('status').executeTakeFirstOrThrow()).toEqual({ status: 'pending' });
    expect(slack.callsTo('conversations.history')).toHaveLength(1);
    await drain();
    expect(slack.roots('CACME')).toHaveLength(1);
    expect(slack.callsTo('conversations.history')).toHaveLength(1);
  });
});
