import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { runStormClock } from '../../src/engine/storm-clock.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { silentLogger } from '../../src/log.js';
import { getAlertDetail } from '../../src/services/alert-read.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { createRootRefresher } from '../../src/slack/transport/root-refresher.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { outboxBacklog, startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * Storms with two replicas (issue 16): two engines, each with its own pool,
 * evaluate one burst of 30 failures in small batches at once; two senders and
 * two refreshers deliver it to one Slack. One storm per channel, one storm
 * message, every notification sent once; the storm's end and the shared
 * cause are decided once though both replicas run the storm clock together.
 */
const TICK = new Date('2026-03-10T02:00:00Z');
const at = (m: number) => new Date(TICK.getTime() + minutes(m));

let t: TestDatabase;
let pools: Db[] = [];
let engines: Engine[] = [];
let rig: OutboxRig;
const workflows: Workflow[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  for (let i = 0; i < 30; i++) workflows.push(await makeWorkflow(t.db, { name: `load-${String(i).padStart(2, '0')}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) }));
  const clock = new ManualClock(at(1));
  pools = [createDb(createPool(t.url, 5)), createDb(createPool(t.url, 5))];
  engines = pools.map((db, i) => createEngine(db, at(1), {}, `replica-${i}`, clock));
});
afterAll(async () => {
  await rig?.close();
  for (const p of pools) await p.destroy();
  await t.drop();
});

/** Both replicas poll at once (their clock at `now`), three runs a batch, until neither finds any. */
async function pollTogether(now: Date) {
  engines[0]!.clock.set(now); // one clock, shared by both engines
  await Promise.all(
    engines.map(async (e) => {
      let idle = 0;
      while (idle < 3) idle = (await pollFinishedRunsDetailed(e.deps, 3)).length === 0 ? idle + 1 : 0;
    }),
  );
}

/** Two senders and two root refreshers on one Slack, ticked together until the outbox owes nothing. */
async function deliverTogether(second: { sender: OutboxRig['sender']; refresher: OutboxRig['refresher'] }) {
  for (let round = 0; round < 5000; round++) {
    const found = await Promise.all([rig.sender.tick(), second.sender.tick(), rig.refresher.tick(), second.refresher.tick()]);
    if (found.some(Boolean)) continue;
    const { open, stale } = await outboxBacklog(t.db);
    if (open === 0 && stale === 0) return;
    rig.clock.advance(500);
  }
  throw new Error('outbox not drained');
}

describe('storms with two replicas', { timeout: 180_000 }, () => {
  it('one storm per channel, one storm message, each notification once; the end and the shared cause told once', async () => {
    for (const wf of workflows) await reportRun(t.db, wf, TICK, { status: 'failed', error: 'warehouse unreachable: connection refused' }, at(1));
    await pollTogether(at(1));

    const alerts = await t.db.selectFrom('alerts').select(['id', 'workflowId']).execute();
    expect(alerts).toHaveLength(30);
    const storms = await t.db.selectFrom('storms').selectAll().orderBy('destination').execute();
    expect(storms.map((s) => s.destination)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
    // The first batch (three openings) was no storm yet; the storm took it in, since nothing had been sent.
    for (const s of storms) expect(await t.db.selectFrom('stormAlerts').select('alertId').where('stormId', '=', s.id).execute()).toHaveLength(30);

    rig = await startOutboxRig(t.db, { start: at(1) });
    const deps = { db: pools[1]!, clock: rig.clock, logger: silentLogger, replicaId: 'second-replica', launchers: () => undefined };
    const second = { sender: createOutboxSender(deps, [slackTransport(deps, rig.api)]), refresher: createRootRefresher(deps, rig.api) };
    await deliverTogether(second);
    for (const channel of ['CACME', 'CPLATFORM']) {
      expect(rig.slack.roots(channel)).toHaveLength(1);
      expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.channel === channel)).toHaveLength(1);
      expect(JSON.stringify(rig.slack.roots(channel)[0]!.blocks)).toContain('Storm: 30 alerts');
    }
    const rows = await t.db.selectFrom('notifications').select(['status', 'idempotencyKey']).execute();
    expect(rows).toHaveLength(60);
    expect(rows.every((r) => r.status === 'sent')).toBe(true);

    // The next tick: 28 recover, two keep failing. Ten minutes on, both replicas run the storm clock at once.
    for (const [i, wf] of workflows.entries()) await reportRun(t.db, wf, at(60), i < 2 ? { status: 'failed', error: 'warehouse unreachable: connection refused' } : { status: 'succeeded' }, at(61));
    rig.clock.set(at(61));
    await pollTogether(at(61));
    const now = at(70);
    const results = await Promise.all(engines.map((e) => runStormClock(e.deps, now)));
    expect(results.some(Boolean)).toBe(true);

    const ended = await t.db.selectFrom('storms').select(['destination', 'endedAt']).orderBy('destination').execute();
    expect(ended.map((s) => s.endedAt)).toEqual([now, now]);
    const outlived = await t.db.selectFrom('alertEvents').select(['alertId', 'data']).where('kind', '=', 'storm_outlived').execute();
    expect(outlived).toHaveLength(4); // two alerts, once per channel's storm
    const shared = await t.db.selectFrom('sharedCauses').selectAll().execute();
    expect(shared).toHaveLength(0); // 28 resolved: two workflows left in the group, fewer than 3

    rig.clock.set(now);
    await deliverTogether(second);
    for (const channel of ['CACME', 'CPLATFORM']) {
      const roots = rig.slack.roots(channel);
      // The storm message, then a root of its own for each alert that outlived the storm, each with the reply that says so.
      expect(roots.map((m) => m.metadata?.event_payload.event)).toEqual(['storm', 'storm_outlived', 'storm_outlived']);
      for (const root of roots.slice(1)) expect(rig.slack.replies(channel, root.ts).map((m) => m.metadata?.event_payload.event)).toEqual(['storm_outlived']);
      const storm = roots[0]!;
      expect(storm.updates).toBeGreaterThan(0);
      expect(JSON.stringify(storm.blocks)).toContain('Storm over: 30 alerts');
      expect(JSON.stringify(storm.blocks)).toContain('2 alerts still open have their own threads');
    }
    const keys = (await t.db.selectFrom('notifications').select(['status', 'idempotencyKey']).execute());
    expect(keys.every((r) => r.status === 'sent')).toBe(true);
    // Nothing posted twice: every top-level message carries a key of its own (a root's first reply shares its root's key by design).
    const tops = rig.slack.messages().filter((m) => !m.threadTs);
    expect(tops).toHaveLength(6);
    expect(new Set(tops.map((m) => m.metadata?.event_payload.key)).size).toBe(6);
  });

  it('a shared cause is called out once, on the platform channel only, though both replicas look at once', async () => {
    await makeTenant(t.db, { id: 'beta', name: 'Beta', channel: 'CBETA' });
    const other = await makeWorkflow(t.db, { tenantId: 'beta', name: 'beta-load', cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) });
    await reportRun(t.db, other, at(60), { status: 'failed', error: 'warehouse unreachable: connection refused' }, at(75));
    rig.clock.set(at(75));
    await pollTogether(at(75));
    // Three workflows of two tenants now fail with one error group (the default threshold: 3 within an hour).
    const results = await Promise.all(engines.map((e) => runStormClock(e.deps, at(76))));
    expect(results.some(Boolean)).toBe(true);
    expect(await t.db.selectFrom('sharedCauses').select(['workflows', 'tenants']).execute()).toEqual([{ workflows: 3, tenants: 2 }]);
    const events = await t.db.selectFrom('alertEvents').select(['id', 'data']).where('kind', '=', 'shared_cause').execute();
    expect(events).toHaveLength(1);
    const told = await t.db.selectFrom('notifications').select('destination').where('eventId', '=', events[0]!.id).execute();
    expect(told).toEqual([{ destination: 'slack:CPLATFORM' }]);

    // It names another tenant's workflow: the tenant's own read API never shows it; the operator's does.
    const alertId = (await t.db.selectFrom('alertEvents').select('alertId').where('id', '=', events[0]!.id).executeTakeFirstOrThrow()).alertId;
    const tenantOf = (await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('workflows.tenantId').where('alerts.id', '=', alertId).executeTakeFirstOrThrow()).tenantId;
    const asTenant = await getAlertDetail(t.db, { tenantId: tenantOf }, alertId);
    expect(asTenant!.events.map((e) => e.kind)).not.toContain('shared_cause');
    expect(asTenant!.notifications.some((n) => n.destination === 'slack:CPLATFORM' && asTenant!.events.every((e) => e.id !== n.eventId))).toBe(false);
    expect((await getAlertDetail(t.db, {}, alertId))!.events.map((e) => e.kind)).toContain('shared_cause');

    await Promise.all(engines.map((e) => runStormClock(e.deps, at(80))));
    expect(await t.db.selectFrom('alertEvents').select('id').where('kind', '=', 'shared_cause').execute()).toHaveLength(1);
  });
});
