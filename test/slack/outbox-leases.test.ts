import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import type { TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * A sender slower than its lease: another replica claims the row once the
 * lease has run out. The slow one's late verdict must not take the row from
 * the replica now holding it, or a third could claim it and send alongside.
 */
let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; } });

const row = () => t.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();

describe('a sender slower than its lease', () => {
  it("its late unknown outcome leaves the row with the replica that took it over; that replica settles it, one message", async () => {
    // The slow replica: a 1 s lease, a 300 ms client timeout. Slack keeps its post but answers too late.
    rig = await startOutboxRig(t.db, { timeoutMs: 300, sender: { leaseMs: 1000 } });
    const deps = { db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'second-replica', launchers: () => undefined };
    const secondApi = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: rig.slack.url, timeoutMs: 10_000, logger: silentLogger }));
    const second = createOutboxSender(deps, [slackTransport(deps, secondApi)]);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    rig.slack.failNext({ kind: 'slow', delayMs: 1500 }, { method: 'chat.postMessage' });
    rig.slack.failNext({ kind: 'slow', delayMs: 1200 }, { method: 'conversations.history' });

    const slow = rig.sender.tick();
    await eventually(() => expect(rig!.slack.callsTo('chat.postMessage')).toHaveLength(1));
    rig.clock.advance(2000);
    // The lease ran out: the second replica claims the row and looks for the post (its answer is slow too).
    const takeover = second.tick();
    await eventually(() => expect(rig!.slack.callsTo('conversations.history')).toHaveLength(1));
    await slow;
    expect(await row()).toMatchObject({ status: 'sending', leaseOwner: 'second-replica' });

    await takeover;
    expect(await row()).toMatchObject({ status: 'sent', leaseOwner: null, result: expect.objectContaining({ recovered: true }) });
    await rig.slack.answered();
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });

  it('one that stalled past its lease before posting posts nothing: the replica that took the row over posted it, one reply', async () => {
    rig = await startOutboxRig(t.db, { sender: { leaseMs: 1000 } });
    const deps = { db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'second-replica', launchers: () => undefined };
    const secondApi = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: rig.slack.url, timeoutMs: 10_000, logger: silentLogger }));
    const second = createOutboxSender(deps, [slackTransport(deps, secondApi)]);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    await rig.sender.tick();
    const [root] = rig.slack.roots('CACME');
    rig.clock.advance(1000);
    const { id } = await addEvent(t.db, alert.id, 'escalated', { now: rig.clock.now(), changes: { severity: 'critical' } });
    // An earlier attempt's outcome is unknown (the row is `sending`, its lease dropped): a claimer looks in the thread first.
    await t.db.updateTable('notifications').set({ status: 'sending', leaseOwner: null, leaseExpiresAt: null }).where('eventId', '=', id).execute();
    const reply = () => t.db.selectFrom('notifications').selectAll().where('eventId', '=', id).executeTakeFirstOrThrow();
    // The first replica's lookup stalls past its lease (the reply is not there, so it would post next).
    rig.slack.failNext({ kind: 'slow', delayMs: 1500 }, { method: 'conversations.replies' });

    const slow = rig.sender.tick();
    await eventually(() => expect(rig!.slack.callsTo('conversations.replies')).toHaveLength(1));
    rig.clock.advance(2000);
    // The lease ran out: the second replica claims the row, finds nothing and posts the reply.
    await second.tick();
    expect(await reply()).toMatchObject({ status: 'sent', leaseOwner: null });
    expect(rig.slack.replies('CACME', root!.ts)).toHaveLength(1);

    // The first one's lookup answers (nothing found); its lease is gone, so it posts nothing and writes nothing.
    await slow;
    await rig.slack.answered();
    expect(rig.slack.replies('CACME', root!.ts)).toHaveLength(1);
    expect(await reply()).toMatchObject({ status: 'sent', leaseOwner: null, lastError: null });
  });
});
