import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/slack/blocks/limits.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { homeModel } from '../../src/slack/views/queries.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes, T0 } from '../helpers/factories.js';
import { startOutboxRig } from '../helpers/slack-outbox.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(() => t.drop());

describe('flapping', () => {
  it('a job alternating success and failure every tick keeps one alert and one thread; it resolves only after recoverAfter successes in a row', async () => {
    const engine = createEngine(t.db, T0, { PLATFORM_CHANNEL: '' });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'flappy', cron: '*/5 * * * *', policy: JSON.stringify({ alertAfter: 2, recoverAfter: 3 }) });
    const tick = (k: number) => new Date(T0.getTime() + minutes(5 * k));
    const at = async (k: number, status: 'succeeded' | 'failed') => {
      engine.clock.set(new Date(tick(k).getTime() + 60_000));
      await reportRun(t.db, wf, tick(k), { status, ...(status === 'failed' ? { error: 'flaky upstream' } : {}) }, engine.clock.now());
      await engine.step();
    };
    await at(0, 'failed');
    await at(1, 'failed');
    // Twenty flips: success, failure, success, failure…
    for (let k = 2; k < 22; k++) await at(k, k % 2 ? 'failed' : 'succeeded');
    const alerts = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).execute();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.status).toBe('open');
    await at(22, 'succeeded');
    await at(23, 'succeeded');
    expect((await t.db.selectFrom('alerts').select('status').where('workflowId', '=', wf.id).executeTakeFirstOrThrow()).status).toBe('open');
    await at(24, 'succeeded');
    const [done] = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).execute();
    expect(done).toMatchObject({ status: 'resolved' });

    // One thread: the flips re-render the root (quiet rows) instead of posting a reply per flip.
    const rig = await startOutboxRig(t.db, { start: engine.clock.now() });
    try {
      await rig.drain();
      const roots = rig.slack.roots('CACME').filter((m) => m.metadata?.event_payload.workflow === 'flappy');
      expect(roots).toHaveLength(1);
      const replies = rig.slack.replies('CACME', roots[0]!.ts).map((m) => m.metadata?.event_payload.event);
      expect(replies.filter((e) => e === 'resolved')).toHaveLength(1);
      // At most an escalation and the recovery, never one per flip; critical and unowned meanwhile, the on-call is
      // paged again on backing-off periods (time, not flips).
      expect(replies.filter((e) => e !== 'reminder').length).toBeLessThanOrEqual(3);
      expect(replies.filter((e) => e === 'reminder').length).toBeLessThanOrEqual(4);
      const notified = await t.db.selectFrom('notifications').innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId').select('alertEvents.kind').where('notifications.alertId', '=', done!.id).execute();
      expect(notified.filter((n) => n.kind === 'opened')).toHaveLength(1);
    } finally {
      await rig.close();
    }
  });
});

describe('storms', () => {
  it('500 workflows failing at once in one channel: 500 alerts, one storm message (within 50 blocks), every notification delivered once; the App Home stays within 100 blocks', async () => {
    const engine = createEngine(t.db, T0, { PLATFORM_CHANNEL: '' });
    await makeTenant(t.db, { id: 'storm', name: 'Storm Co', channel: 'CSTORM' });
    const workflows = [];
    for (let i = 0; i < 500; i++) workflows.push(await makeWorkflow(t.db, { tenantId: 'storm', name: `storm-${String(i).padStart(3, '0')}`, cron: '0 2 * * *' }));
    engine.clock.set(new Date(T0.getTime() + 60_000));
    for (const wf of workflows) await reportRun(t.db, wf, T0, { status: 'failed', error: 'shared database is down' }, engine.clock.now());
    await engine.drain();
    const opened = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.id').where('workflows.tenantId', '=', 'storm').execute();
    expect(opened).toHaveLength(500);

    const rig = await startOutboxRig(t.db, { server: { postMessageMinIntervalMs: 1000 }, start: engine.clock.now() });
    try {
      await rig.drain({ maxClockMs: 2 * 3_600_000, stepMs: 1000 });
      // One storm message instead of 500 roots: it lists 40, counts the rest, and stays within Block Kit's 50 blocks.
      const roots = rig.slack.roots('CSTORM');
      expect(roots).toHaveLength(1);
      expect(roots[0]!.blocks!.length).toBeLessThanOrEqual(LIMITS.messageBlocks);
      expect(JSON.stringify(roots[0]!.blocks)).toContain('Storm: 500 alerts');
      expect(JSON.stringify(roots[0]!.blocks)).toContain('460 more open');
      const rows = await t.db.selectFrom('notifications').select('status').where('alertId', 'in', opened.map((a) => a.id)).execute();
      expect(rows).toHaveLength(500);
      expect(rows.filter((r) => r.status !== 'sent')).toEqual([]);
      const posts = rig.slack.callsTo('chat.postMessage').filter((c) => c.channel === 'CSTORM');
      expect(posts.filter((c) => c.outcome !== 'ok')).toEqual([]);
      expect(posts).toHaveLength(1);

      const tenantIds = (await t.db.selectFrom('tenants').select('id').execute()).map((r) => r.id);
      const home = renderHome(await homeModel(t.db, rig.clock.now(), tenantIds), rig.clock.now());
      expect(home.blocks.length).toBeLessThanOrEqual(LIMITS.surfaceBlocks);
      const text = JSON.stringify(home.blocks);
      expect(text).toContain('500 open');
      for (const b of home.blocks as { text?: { text: string } }[]) if (b.text) expect(b.text.text.length).toBeLessThanOrEqual(LIMITS.sectionText);
    } finally {
      await rig.close();
    }
  }, 240_000);
});
