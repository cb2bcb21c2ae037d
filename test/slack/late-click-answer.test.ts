import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, PLATFORM, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * A click's in-place answer that lands late: the root refresher has shown a
 * newer state in the meantime, and the late answer (rendered before it)
 * replaces the message with an older one. The refresher must render the
 * newest state once more, not leave the root behind.
 */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  rig = await startSlackRig(t.db, { clock: engine.clock, launchers: engine.launcher.resolver, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

async function failTick(wf: Workflow, n: number) {
  engine.clock.set(new Date(Math.max(hour(n).getTime() + minutes(2), engine.clock.now().getTime())));
  await fireTick(engine, wf, hour(n), { status: 'failed', error: 'connect ECONNREFUSED', stage: 'upload' });
  await engine.drain();
  await rig.drain();
}

describe('a late in-place answer', () => {
  it('does not leave the clicked root showing an older state than the refresher had shown', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'hourly-export', cron: '0 * * * *', policy: JSON.stringify({ retries: 0, recoverAfter: 1 }) });
    await failTick(wf, 1);
    await failTick(wf, 2);
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).where('status', '=', 'open').executeTakeFirstOrThrow();
    const root = rig.slack.roots('CACME').find((m) => m.metadata?.event_payload.alert_id === alert.id)!;
    expect(root).toBeDefined();

    const release = rig.slack.holdResponses();
    const answered = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE', messageTs: root.ts });
    // The ownership is committed; its in-place answer (rendered from that state) is on its way, held.
    await eventually(async () => {
      const a = await t.db.selectFrom('alerts').select('ownerUser').where('id', '=', alert.id).executeTakeFirstOrThrow();
      if (a.ownerUser !== 'U0ALICE') throw new Error('not owned yet');
    });
    // Meanwhile a third failure: the refresher shows the newer count on the root before the answer lands.
    await failTick(wf, 3);
    const newer = rig.slack.callsTo('chat.update').filter((c) => c.ts === root.ts).at(-1);
    expect(JSON.stringify(newer?.blocks)).toContain('3 failures');

    release();
    await eventually(() => {
      if (!rig.slack.responses.slice(answered).some((r) => r.body.replace_original === true)) throw new Error('no in-place answer yet');
    });
    const updatesAtAnswer = rig.slack.callsTo('chat.update').filter((c) => c.ts === root.ts).length;
    // The late answer showed the state before the third failure: the refresher renders the newest again.
    const again = await eventually(async () => {
      await rig.drain();
      const later = rig.slack.callsTo('chat.update').filter((c) => c.ts === root.ts).slice(updatesAtAnswer);
      if (later.length === 0) throw new Error('root not rendered again');
      return later.at(-1)!;
    });
    expect(JSON.stringify(again.blocks)).toContain('3 failures');
    expect(JSON.stringify(again.blocks)).toContain('<@U0ALICE>');
  });
});
