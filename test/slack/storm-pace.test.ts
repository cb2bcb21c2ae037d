import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * A channel's posting pace (about one message a second) is spent on posts only: a storm
 * member's event once the storm message is up, or a quiet event (a failure count), is
 * re-rendered in place and posts nothing, so it takes no slot. Before, every such row took
 * the channel's next second: thirty members held the channel half a minute with nothing
 * posted, and an unrelated alert's root there waited behind them.
 */
const TICK = new Date('2026-03-10T02:00:00Z');
const at = (m: number) => new Date(TICK.getTime() + minutes(m));
const MEMBERS = 30;

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, at(1), { PLATFORM_CHANNEL: '' });
  rig = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: '' } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

describe('the channel pace under a storm', { timeout: 120_000 }, () => {
  it('members re-rendered into the storm message take no posting slot: thirty hold the channel no longer than its one post', async () => {
    for (let i = 0; i < MEMBERS; i++) {
      const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: `load-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) });
      await reportRun(t.db, wf, TICK, { status: 'failed', error: 'warehouse unreachable' }, at(1));
    }
    await engine.drain();
    const started = engine.clock.now().getTime();
    await rig.drain();
    expect(rig.slack.roots('CACME').map((m) => m.metadata?.event_payload.event)).toEqual(['storm']);
    const delivered = await t.db.selectFrom('notifications').select(['status']).where('destination', '=', 'slack:CACME').execute();
    expect(delivered.length).toBeGreaterThanOrEqual(MEMBERS);
    expect(delivered.every((n) => n.status === 'sent')).toBe(true);
    // One post (the storm message): its slot and the second after it, not one second per member.
    expect(engine.clock.now().getTime() - started).toBeLessThan(10_000);
    const slot = await t.db.selectFrom('paceSlots').select('nextAt').where('key', '=', 'slack:CACME').executeTakeFirstOrThrow();
    expect(slot.nextAt.getTime() - started).toBeLessThan(5_000);
  });
});
