import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
