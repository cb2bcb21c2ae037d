import { describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * chat.update is paced for the whole workspace (one every 1.2 s), and storm
 * messages and alert roots share that pace. Tenant A's storm whose members
 * keep changing (one escalates each round) must not keep tenant B's root
 * from showing B's alert escalated: counted in chat.update calls.
 */
let t: TestDatabase;
let rig: OutboxRig | undefined;
outboxTestHooks({
  database: (db) => (t = db),
  closeRig: async () => rig?.close(),
  tenants: [
    { id: 'storm', name: 'Storm', channel: 'CSTORM' },
    { id: 'quiet', name: 'Quiet', channel: 'CQUIET' },
  ],
});

/** The sender delivers everything due, the clock moved past each channel's pace. */
async function deliverAll(): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await rig!.sender.tick()) continue;
    const pending = await t.db.selectFrom('notifications').select('id').where('status', 'in', ['pending', 'sending']).execute();
    if (pending.length === 0) return;
    rig!.clock.advance(1_100);
  }
}

describe("root re-renders under another tenant's churning storm", () => {
  it("re-renders B's root within the first two updates while A's storm changes every round", async () => {
    rig = await startOutboxRig(t.db);
    const members = [];
    for (let i = 0; i < 12; i++) {
      const alert = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'storm', name: `load-${i}` })).id);
      await addEvent(t.db, alert.id, 'opened', { now: T0, storms: true });
      members.push(alert);
    }
    const quiet = await insertAlert(t.db, (await makeWorkflow(t.db, { tenantId: 'quiet', name: 'load-0' })).id);
    await addEvent(t.db, quiet.id, 'opened', { now: T0, storms: true });
    await rig.drain();
    expect(rig.slack.roots('CSTORM')).toHaveLength(1);
    expect(rig.slack.roots('CQUIET')).toHaveLength(1);
    const updatesBefore = rig.slack.callsTo('chat.update').length;

    // B's alert escalates; then each round one more of A's members does, and the refresher gets one slot.
    await addEvent(t.db, quiet.id, 'escalated', { now: rig.clock.now(), storms: true, changes: { severity: 'critical' } });
    await deliverAll();
    for (let round = 0; round < 8; round++) {
      await addEvent(t.db, members[round]!.id, 'escalated', { now: rig.clock.now(), storms: true, changes: { severity: 'critical' } });
      await deliverAll();
      rig.clock.advance(1_300);
      await rig.refresher.tick();
    }
    const updates = rig.slack.callsTo('chat.update').slice(updatesBefore).map((c) => c.channel);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.slice(0, 2)).toContain('CQUIET');
    // A's storm message is still kept current alongside.
    expect(updates.filter((c) => c === 'CSTORM').length).toBeGreaterThanOrEqual(updates.length - 2);
  });
});
