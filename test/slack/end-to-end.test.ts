import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { ACTION, METADATA_EVENT_TYPE } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, PLATFORM, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/** An alert from the real engine, through the outbox, to Slack threads, driven by signed clicks. */
const START = new Date('2026-03-10T00:00:00Z');
const hour = (n: number) => new Date(START.getTime() + n * 3_600_000);

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
let wf: Workflow;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  rig = await startSlackRig(t.db, { clock: engine.clock, launchers: engine.launcher.resolver, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  wf = await makeWorkflow(t.db, {
    tenantId: 'acme',
    name: 'hourly-export',
    cron: '0 * * * *',
    mode: 'managed',
    launcher: JSON.stringify({ kind: 'command', command: './export' }),
    policy: JSON.stringify({ retries: 0, recoverAfter: 1 }),
  });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

async function failTick(n: number, error: string) {
  engine.clock.set(new Date(hour(n).getTime() + minutes(2)));
  await fireTick(engine, wf, hour(n), { status: 'failed', error, stage: 'upload' });
  await engine.drain();
  await rig.drain();
}

const alertRow = () => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();

describe('an alert from the engine, end to end', () => {
  it('one root per channel, a reply per event in order, and a root that ends "resolved after …"', async () => {
    await failTick(1, 'connect ECONNREFUSED 10.0.0.7:5432');
    expect(rig.slack.messages()).toHaveLength(0); // one failure is not an alert yet
    await failTick(2, 'connect ECONNREFUSED 10.0.0.9:5432');
    const alert = await alertRow();
    for (const channel of ['CACME', PLATFORM]) expect(rig.slack.roots(channel)).toHaveLength(1);

    await failTick(3, 'disk full: /var/lib/export <!channel>'); // a new error group, said in the thread
    engine.clock.set(new Date(Math.max(alert.escalateAt!.getTime(), engine.clock.now().getTime()) + minutes(1)));
    await runEscalationClock(engine.deps);
    await rig.drain();

    const click = async (actionId: string, extra: { value?: string; selected?: string }, until: (a: Awaited<ReturnType<typeof alertRow>>) => boolean) => {
      await rig.click({ actionId, channel: 'CACME', user: 'U0ALICE', ...extra });
      await eventually(async () => {
        if (!until(await alertRow())) throw new Error(`${actionId} not applied yet`);
      });
      await rig.drain();
    };
    await click(ACTION.takeOwnership, { value: String(alert.id) }, (a) => a.ownerUser === 'U0ALICE');
    await click(ACTION.silence, { selected: `${alert.id}:1h` }, (a) => a.silencedBy === 'U0ALICE');
    await click(ACTION.unsilence, { value: String(alert.id) }, (a) => a.silencedBy === null);

    engine.launcher.script(wf.id, { status: 'succeeded' });
    await rig.click({ actionId: ACTION.runNow, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    await eventually(async () => {
      const run = await t.db.selectFrom('runs').select('status').where('trigger', '=', 'manual').executeTakeFirst();
      if (run?.status !== 'succeeded') throw new Error('manual run not finished yet');
    });
    engine.clock.advance(minutes(1));
    await engine.drain();
    await rig.drain();

    const resolved = await alertRow();
    expect(resolved.status).toBe('resolved');
    for (const channel of ['CACME', PLATFORM]) {
      const [root, ...others] = rig.slack.roots(channel);
      expect(others).toHaveLength(0);
      const replies = rig.slack.replies(channel, root!.ts);
      expect(replies.map((m) => m.metadata?.event_payload.event)).toEqual([
        'error_group_changed',
        'escalated',
        'owner_changed',
        'silenced',
        'unsilenced',
        'run_requested',
        'run_finished',
        'resolved',
      ]);
      expect(replies[2]!.text).toMatch(/ \/ [\w-]+: <@U0ALICE> took ownership\. Escalation stopped\.$/);
      expect(replies[5]!.text).toMatch(/: <@U0ALICE> started run #\d+\.$/);
      expect(replies[7]!.text).toMatch(/: Recovered: run #\d+ succeeded\. Resolved after \d+h( \d{2}m)?\.$/);
      expect(root!.text).toMatch(/Resolved after \d+h( \d{2}m)?\.$/);
      expect(JSON.stringify(root!.blocks)).toContain('Resolved after');
      expect(JSON.stringify([root, ...replies])).not.toContain('<!channel>');
      for (const m of [root!, ...replies]) {
        expect(m.metadata).toMatchObject({
          event_type: METADATA_EVENT_TYPE,
          event_payload: { alert_id: alert.id, tenant: 'acme', workflow: 'hourly-export', severity: expect.any(String), key: expect.stringMatching(new RegExp(`^alert:${alert.id}:event:\\d+:slack:${channel}$`)) },
        });
      }
    }
    // Every outbox row went out exactly once.
    const rows = await t.db.selectFrom('notifications').select(['status', 'idempotencyKey']).execute();
    const keys = rig.slack.messages().map((m) => m.metadata?.event_payload.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(rows.filter((r) => r.status !== 'sent' && r.status !== 'skipped')).toEqual([]);
  });
});
