import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * /readyz turns 503 for a loop whose last tick threw (src/http/health.ts). A
 * revoked token is the workspace's state, the same on every replica: were a
 * Slack loop to throw on it, every replica would leave the load balancer and
 * pings and reports would go unanswered for a Slack problem. So no Slack loop
 * throws while Slack refuses the token (docs/operations.md, Kubernetes).
 */
const TICK = new Date('2026-03-10T02:00:00Z');

let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, new Date(TICK.getTime() + 60_000));
  rig = await startSlackRig(t.db, { clock: engine.clock, env: { PLATFORM_CHANNEL: PLATFORM } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(async () => {
  await rig.close();
  await t.drop();
});

it('a revoked token fails no Slack loop tick (sender, root refresher, App Home, maintenance notes): the replica stays ready', async () => {
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1 }) });
  await reportRun(t.db, wf, TICK, { status: 'failed', error: 'disk full' }, engine.clock.now());
  await engine.drain();
  await rig.drain();
  expect(rig.slack.roots('CACME')).toHaveLength(1);
  await t.db.insertInto('slackHomeViews').values({ userId: 'U0ALICE', openedAt: engine.clock.now() }).execute();

  rig.slack.failNext({ kind: 'platform_error', error: 'token_revoked' }, { times: Infinity });
  // More for every loop to do: a second failure re-renders the root and adds a reply.
  engine.clock.advance(3_600_000);
  await reportRun(t.db, wf, new Date(TICK.getTime() + 3_600_000), { status: 'failed', error: 'disk full again' }, engine.clock.now());
  await engine.drain();
  expect(rig.runtime.loops.map((l) => l.name)).toEqual(expect.arrayContaining(['outbox-sender', 'slack-root-refresher', 'slack-home-refresher', 'slack-maintenance-notes', 'slack-held-back-notes']));
  const thrown: string[] = [];
  for (let round = 0; round < 40; round++) {
    for (const loop of rig.runtime.loops) await loop.tick().catch((error: unknown) => thrown.push(`${loop.name}: ${String(error)}`));
    engine.clock.advance(15_000);
  }
  expect(thrown).toEqual([]);
  // The refusals were met, not avoided: a post, the App Home's publish and the probes.
  for (const method of ['chat.postMessage', 'views.publish', 'auth.test']) expect(rig.slack.callsTo(method).map((c) => c.outcome)).toContain('token_revoked');
});
