import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * Bolt asks `authorize` before any listener runs, so the first request after
 * start-up waits for auth.test. Slack hanging on it must not hold requests
 * past the 3-second ack deadline, and a failed or timed-out ask is tried
 * again later (not kept), without every request in between paying for it.
 */

let t: TestDatabase;
let rig: SlackRig | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(() => t.drop());
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** `/scheduler help`, timed from send to Slack's HTTP answer (the ack), and its response. */
async function help(r: SlackRig) {
  const answered = r.slack.responses.length;
  const started = performance.now();
  const res = await r.command('help', { channel: 'CACME' });
  const ackMs = performance.now() - started;
  expect(res.status).toBe(200);
  await eventually(() => expect(r.slack.responses.length).toBe(answered + 1));
  return ackMs;
}

describe('bot authorization (auth.test)', () => {
  it('a hanging auth.test does not hold a request past the ack deadline; it is asked again after a while, and its answer kept', async () => {
    rig = await startSlackRig(t.db);
    rig.slack.failNext({ kind: 'slow', delayMs: 8_000 }, { method: 'auth.test', times: 5 });
    expect(await help(rig)).toBeLessThan(2_500);
    const asked = rig.slack.callsTo('auth.test').length;
    expect(asked).toBeGreaterThanOrEqual(1);

    // Soon after, requests are authorized with the token alone, without waiting on Slack again.
    rig.clock.advance(5_000);
    expect(await help(rig)).toBeLessThan(1_000);
    expect(rig.slack.callsTo('auth.test')).toHaveLength(asked);

    // Later it is asked again; Slack answers now, and the answer is kept.
    rig.slack.clearFaults();
    rig.clock.advance(60_000);
    await help(rig);
    expect(rig.slack.callsTo('auth.test')).toHaveLength(asked + 1);
    rig.clock.advance(3_600_000);
    await help(rig);
    expect(rig.slack.callsTo('auth.test')).toHaveLength(asked + 1);
  });

  it('an auth.test that fails is tried again later, not kept', async () => {
    rig = await startSlackRig(t.db);
    rig.slack.failNext({ kind: 'http_500' }, { method: 'auth.test', times: 5 });
    await help(rig);
    const asked = rig.slack.callsTo('auth.test').length;
    rig.slack.clearFaults();
    rig.clock.advance(60_000);
    await help(rig);
    expect(rig.slack.callsTo('auth.test')).toHaveLength(asked + 1);
    expect(rig.slack.callsTo('auth.test').at(-1)!.outcome).toBe('ok');
  });
});
