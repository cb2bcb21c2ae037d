import { describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * A Slack error that says what was sent is wrong (or not allowed) fails the
 * same way on every retry: the row goes dead, visible, and its channel and
 * its thread go on. Only errors Slack documents as passing (internal_error,
 * service_unavailable, request_timeout…) hold the channel and retry.
 */
let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; } });

describe('Slack refusing one message', () => {
  for (const error of ['metadata_too_large', 'invalid_arguments', 'restricted_action_read_only_channel', 'cannot_reply_to_message']) {
    it(`${error}: that row is dead at once, the channel is not held, the thread goes on`, async () => {
      rig = await startOutboxRig(t.db);
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      const other = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0 });
      await rig.drain();
      rig.slack.failNext({ kind: 'platform_error', error }, { method: 'chat.postMessage', inThread: true });
      await addEvent(t.db, alert.id, 'escalated', { now: rig.clock.now(), changes: { severity: 'critical', escalatedAt: rig.clock.now() } });
      await addEvent(t.db, alert.id, 'resolved', { now: rig.clock.now(), changes: { status: 'resolved', resolvedAt: rig.clock.now() } });
      await addEvent(t.db, other.id, 'opened', { now: rig.clock.now() });
      const start = rig.clock.now().getTime();
      await rig.drain();

      const rows = await t.db.selectFrom('notifications').select(['alertId', 'status', 'lastError', 'attempts']).orderBy('id').execute();
      expect(rows.map((r) => [r.alertId, r.status])).toEqual([
        [alert.id, 'sent'],
        [alert.id, 'dead'],
        [alert.id, 'sent'],
        [other.id, 'sent'],
      ]);
      expect(rows[1]).toMatchObject({ lastError: error, attempts: 1 });
      const [root] = rig.slack.roots('CACME');
      expect(rig.slack.replies('CACME', root!.ts).map((m) => m.metadata?.event_payload.event)).toEqual(['resolved']);
      expect(rig.slack.roots('CACME')).toHaveLength(2);
      expect(await t.db.selectFrom('destinationOutages').selectAll().execute()).toEqual([]);
      // Paced, not backed off: three posts a second apart.
      expect(rig.clock.now().getTime() - start).toBeLessThan(5000);
    });
  }

  it('service_unavailable holds the channel and the row is sent once Slack is back', async () => {
    rig = await startOutboxRig(t.db);
    const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'acme' })).id);
    rig.slack.failNext({ kind: 'platform_error', error: 'service_unavailable' }, { method: 'chat.postMessage', times: 2 });
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    await rig.drain();
    expect(await t.db.selectFrom('notifications').select(['status', 'attempts']).execute()).toEqual([{ status: 'sent', attempts: 2 }]);
    expect(rig.slack.roots('CACME')).toHaveLength(1);
  });
});
