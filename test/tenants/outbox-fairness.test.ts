import { afterEach, describe, expect, it } from 'vitest';
import type { NewRun, Workflow } from '../../src/db/schema.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startOutboxRig, type OutboxRig } from '../helpers/slack-outbox.js';

/**
 * Tenant A's 300 workflows fail at once; tenant B's one workflow fails just
 * after. B's alert reaches B's channel among the first posts, whether A's
 * channel is one storm message or 300 roots that Slack refuses with 429s:
 * counted in Slack calls, not seconds.
 */
const NOW = new Date('2026-03-31T00:00:00Z');
let t: TestDatabase | undefined;
let rig: OutboxRig | undefined;

afterEach(async () => {
  await rig?.close();
  await t?.drop();
});

async function stormThenOne(env: Record<string, string>): Promise<{ quiet: Workflow }> {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'storm', name: 'Storm', channel: 'CSTORM' });
  await makeTenant(t.db, { id: 'quiet', name: 'Quiet', channel: 'CQUIET' });
  const policy = JSON.stringify({ alertAfter: 1 });
  const storming: Workflow[] = [];
  for (let i = 0; i < 300; i++) storming.push(await makeWorkflow(t.db, { tenantId: 'storm', name: `load-${i}`, policy }));
  const quiet = await makeWorkflow(t.db, { tenantId: 'quiet', name: 'load-0', policy });
  const failed = (w: Workflow): NewRun => {
    const tick = new Date(NOW.getTime() - 300_000);
    return newRunRow({ workflowId: w.id, tick, trigger: 'external', status: 'failed', attemptStatus: 'failed', attemptError: 'boom', error: 'boom', startedAt: tick, finishedAt: tick });
  };
  await t.db.insertInto('runs').values(storming.map(failed)).execute();
  await t.db.insertInto('runs').values(failed(quiet)).execute();
  const engine = createEngine(t.db, NOW, env);
  while ((await pollFinishedRunsDetailed(engine.deps, 100)).length > 0);
  expect(await t.db.selectFrom('alerts').select('id').execute()).toHaveLength(301);
  rig = await startOutboxRig(t.db, { start: NOW });
  return { quiet };
}

/** Runs the sender at its pace, the clock moved a channel's interval whenever nothing may be sent now, until B's channel has a post: its index among all posts. */
async function quietPostIndex(): Promise<number> {
  const posts = () => rig!.slack.callsTo('chat.postMessage');
  const quietAt = () => posts().findIndex((c) => c.channel === 'CQUIET');
  for (let round = 0; round < 50 && quietAt() < 0; round++) {
    if (!(await rig!.sender.tick())) rig!.clock.advance(1_100);
  }
  return quietAt();
}

describe("the outbox under one tenant's storm", () => {
  it("posts B's alert to B's channel among the first posts; on the platform channel it is a member of the one storm message", async () => {
    const { quiet } = await stormThenOne({});
    const at = await quietPostIndex();
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(3);
    // B's opening came within A's storm on the platform channel: told as a member of that one message
    // (docs/alerts.md "Storms"), not as a root behind A's 300.
    const quietAlert = await t!.db.selectFrom('alerts').select('id').where('workflowId', '=', quiet.id).executeTakeFirstOrThrow();
    expect(await t!.db.selectFrom('stormAlerts').select('destination').where('alertId', '=', quietAlert.id).execute()).toEqual([{ destination: `slack:${PLATFORM}` }]);
  }, 120_000);

  it("storms off and A's channel answering 429 (Retry-After 10 minutes): B's alert still among the first posts", async () => {
    await stormThenOne({ STORM_MIN_ALERTS: '0' });
    rig!.slack.failNext({ kind: 'http_429', retryAfterSeconds: 600 }, { channel: 'CSTORM', times: 1000 });
    const at = await quietPostIndex();
    expect(at).toBeGreaterThanOrEqual(0);
    // A's channel: refused, nothing stored; the platform channel's pace is its own (A's roots there, one a second).
    const posts = rig!.slack.callsTo('chat.postMessage');
    expect(posts.slice(0, at).filter((c) => c.channel === 'CSTORM').length).toBeLessThanOrEqual(1);
    expect(at).toBeLessThan(4);
  }, 120_000);

  it("storms off: on the shared platform channel B's root goes out in A's first turns, not behind A's 300 roots; each tenant's roots in the order written", async () => {
    await stormThenOne({ STORM_MIN_ALERTS: '0' });
    const platform = () => rig!.slack.callsTo('chat.postMessage').filter((c) => c.channel === PLATFORM && !c.threadTs);
    const quietAt = () => platform().findIndex((c) => String(c.text).includes('Quiet / load-0'));
    for (let round = 0; round < 30 && (quietAt() < 0 || platform().length < 5); round++) {
      if (!(await rig!.sender.tick())) rig!.clock.advance(1_100);
    }
    expect(quietAt()).toBeGreaterThanOrEqual(0);
    expect(quietAt()).toBeLessThan(3);
    // A's roots there keep the order its alerts opened in (load-0, load-1, …), before B's and after.
    const stormRoots = platform().flatMap((c) => /^Warning \(open\): Storm \/ load-(\d+),/.exec(String(c.text))?.[1] ?? []).map(Number);
    expect(stormRoots.length).toBeGreaterThanOrEqual(2);
    expect(stormRoots).toEqual(stormRoots.map((_, i) => i));
  }, 120_000);
});
