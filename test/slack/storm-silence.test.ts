import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/db/schema.js';
import { ACTION, stormBlockId } from '../../src/slack/blocks/ids.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * A storm member silenced (until resolved) when its storm ends: the thread it is owed (storm_outlived)
 * waits with its other messages, and comes when the silence ends with the alert still open, not summed up away.
 */
const TICK = new Date('2026-03-10T02:00:00Z');
const at = (m: number) => new Date(TICK.getTime() + minutes(m));

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
let alerts: Alert[];
let stormId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, at(1));
  rig = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  for (let i = 0; i < 6; i++) {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: `load-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) });
    await reportRun(t.db, wf, TICK, { status: 'failed', error: 'warehouse unreachable' }, at(1));
  }
  await engine.drain();
  await rig.drain();
  alerts = await t.db.selectFrom('alerts').selectAll().orderBy('id').execute();
  stormId = (await t.db.selectFrom('storms').select('id').where('destination', '=', 'slack:CACME').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

describe('a storm member silenced when the storm ends', { timeout: 60_000 }, () => {
  it('gets its own thread when the silence ends with it still open', async () => {
    expect(rig.slack.roots('CACME')).toHaveLength(1);
    const silenced = alerts[0]!;
    await rig.click({ actionId: ACTION.stormAlertMenu, blockId: stormBlockId(stormId, silenced.id), selected: `${silenced.id}:silence:resolved`, channel: 'CACME' });
    await eventually(async () => expect((await t.db.selectFrom('alerts').select('silencedBy').where('id', '=', silenced.id).executeTakeFirstOrThrow()).silencedBy).toBe('U0ALICE'));

    // The next tick: all but the silenced one recover; the storm stops growing and ends with one alert open.
    const wfs = await t.db.selectFrom('workflows').selectAll().orderBy('id').execute();
    engine.clock.set(at(61));
    for (const wf of wfs) await reportRun(t.db, wf, at(60), wf.id === silenced.workflowId ? { status: 'failed', error: 'warehouse unreachable' } : { status: 'succeeded' }, at(61));
    await engine.drain();
    engine.clock.set(at(62));
    await runEscalationClock(engine.deps);
    expect((await t.db.selectFrom('storms').select('endedAt').where('id', '=', stormId).executeTakeFirstOrThrow()).endedAt).not.toBeNull();
    await rig.drain();
    expect(rig.slack.roots('CACME')).toHaveLength(1); // silenced: nothing posted yet

    // Unsilenced, the alert still open: the thread it was owed is posted now.
    const responses = rig.slack.responses.length;
    await rig.command('unsilence load-0', { channel: 'CACME' });
    await eventually(() => rig.slack.responses[responses] ?? Promise.reject(new Error('no answer yet')));
    await eventually(async () => expect((await t.db.selectFrom('alerts').select('silencedBy').where('id', '=', silenced.id).executeTakeFirstOrThrow()).silencedBy).toBeNull());
    await rig.drain();
    const roots = rig.slack.roots('CACME');
    expect(roots.map((m) => m.metadata?.event_payload.event)).toEqual(['storm', 'storm_outlived']);
    expect(roots[1]!.metadata?.event_payload.alert_id).toBe(Number(silenced.id));
    const replies = rig.slack.replies('CACME', roots[1]!.ts).map((m) => m.metadata?.event_payload.event);
    expect(replies).toEqual(['storm_outlived', 'unsilenced']);
    const thread = await t.db.selectFrom('alertThreads').select('rootTs').where('alertId', '=', silenced.id).where('destination', '=', 'slack:CACME').executeTakeFirst();
    expect(thread?.rootTs).toBe(roots[1]!.ts);
  });
});
