import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/slack/blocks/limits.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { homeModel } from '../../src/slack/views/queries.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { startOutboxRig } from '../helpers/slack-outbox.js';

// At scale (half a minute of CPU, in both of CI's npm test passes it was the longest test), so in `npm run test:slow`;
// the storm rules at a few dozen workflows are in `npm test` (test/engine/storm-*.test.ts, test/replay/bundled-scenarios.test.ts).
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

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
