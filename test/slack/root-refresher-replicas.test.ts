import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createRootRefresher } from '../../src/slack/transport/root-refresher.js';
import type { TestDatabase } from '../helpers/db.js';
import { makeWorkflow, T0 } from '../helpers/factories.js';
import { addEvent, insertAlert, outboxTestHooks, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * chat.update is Tier 3, about 50 a minute per workspace: the pace of root
 * re-renders is the workspace's, whichever replica sends them.
 */
let t: TestDatabase;
let rig: OutboxRig | undefined;

outboxTestHooks({ database: (db) => (t = db), closeRig: async () => { await rig?.close(); rig = undefined; }, tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' }] });

/** Six alerts across two channels, each opened and then counted once more: six roots owing a re-render. */
async function staleRoots(r: OutboxRig): Promise<void> {
  const alerts = [];
  for (let i = 0; i < 6; i++) {
    const wf = await makeWorkflow(t.db, { tenantId: i % 2 ? 'acme' : 'globex' });
    const alert = await insertAlert(t.db, wf.id);
    await addEvent(t.db, alert.id, 'opened', { now: T0 });
    alerts.push(alert);
  }
  await r.drain();
  const updatesBefore = r.slack.callsTo('chat.update').length;
  for (const alert of alerts) await addEvent(t.db, alert.id, 'failure_recorded', { now: r.clock.now(), changes: { consecutiveFailures: 4 } });
  // The sender alone (no refresher): each channel's quiet rows at its pace.
  for (let i = 0; i < 5; i++) {
    r.clock.advance(1000);
    while (await r.sender.tick());
  }
  expect(await t.db.selectFrom('notifications').select('id').where('status', '<>', 'sent').execute()).toEqual([]);
  expect(r.slack.callsTo('chat.update')).toHaveLength(updatesBefore);
}

/** Another replica's refresher: its own process memory, the same database and Slack. */
function replica(r: OutboxRig) {
  return createRootRefresher({ db: t.db, clock: r.clock, logger: silentLogger, launchers: () => undefined }, r.api);
}

describe('root re-renders under several replicas', () => {
  it('three replicas together send one chat.update per 1.2 s for the workspace, and every root is re-rendered once', async () => {
    rig = await startOutboxRig(t.db);
    await staleRoots(rig);
    const start = rig.clock.now().getTime();
    const before = rig.slack.callsTo('chat.update').length;
    const refreshers = [rig.refresher, replica(rig), replica(rig)];
    // Every replica's loop looks every 100 ms for 7.2 s.
    for (let step = 0; step < 72; step++) {
      for (const r of refreshers) await r.tick();
      rig.clock.advance(100);
    }
    const updates = rig.slack.callsTo('chat.update').slice(before);
    expect(updates.map((c) => c.at.getTime() - start)).toEqual([0, 1200, 2400, 3600, 4800, 6000]);
    expect(new Set(updates.map((c) => `${c.channel}/${c.ts}`)).size).toBe(6);
  });

  it('a 429 on chat.update holds every replica for its Retry-After', async () => {
    rig = await startOutboxRig(t.db);
    await staleRoots(rig);
    const start = rig.clock.now().getTime();
    const before = rig.slack.callsTo('chat.update').length;
    rig.slack.failNext({ kind: 'http_429', retryAfterSeconds: 5 }, { method: 'chat.update' });
    const refreshers = [rig.refresher, replica(rig)];
    for (let step = 0; step < 60; step++) {
      for (const r of refreshers) await r.tick();
      rig.clock.advance(100);
    }
    const updates = rig.slack.callsTo('chat.update').slice(before);
    expect(updates[0]!.outcome).toBe('http_429');
    expect(updates.slice(1).map((c) => c.at.getTime() - start)).toEqual([5000]);
  });
});
