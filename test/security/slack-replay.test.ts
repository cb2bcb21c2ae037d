import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { Launcher } from '../../src/launcher.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, SIGNING_SECRET, slackSignature, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

/**
 * A request Slack signed is good for five minutes by its timestamp. Whoever
 * captures one (a proxy's or a load balancer's request log, a shared debug
 * dump) could send it again within them: a `/scheduler run` would start a
 * second run, a silence be set twice. A signature is taken once, across
 * replicas; a replay gets 401 and changes nothing.
 */
let t: TestDatabase;
let a: SlackRig;
let b: SlackRig;
const launched: number[] = [];
const launcher: Launcher = { kind: 'test', launch: async (ctx) => (launched.push(ctx.runId), { started: true }) };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  await makeWorkflow(t.db, { tenantId: 'globex', name: 'globex-import', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
  // Two replicas behind one load balancer, on one database.
  a = await startSlackRig(t.db, { launchers: () => launcher });
  b = await startSlackRig(t.db, { launchers: () => launcher, clock: a.clock });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await t?.drop();
});

/** The runs started so far end, so that the next Run now is not refused as overlapping one still running. */
const finishRuns = () => t.db.updateTable('runs').set({ status: 'succeeded', finishedAt: a.clock.now() }).where('status', '=', 'running').execute();

function signedPost(url: string, body: string, ts: number, extra: Record<string, string> = {}) {
  return fetch(`${url}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body), ...extra },
    body,
  });
}

const commandBody = (text: string, n: number) =>
  new URLSearchParams({
    token: 'legacy',
    team_id: 'T0TEST',
    channel_id: 'CGLOBEX',
    user_id: 'U0ALICE',
    user_name: 'alice',
    command: '/scheduler',
    text,
    api_app_id: 'A0TEST',
    response_url: a.slack.responseUrl(`replay${n}`),
    trigger_id: `replay-trigger-${n}`,
  }).toString();

describe('a signed Slack request sent again', () => {
  it('is refused (401) on the replica that took it and on another; the run starts once', async () => {
    const ts = Math.floor(systemClock.now().getTime() / 1000);
    const body = commandBody('run globex-import', 1);
    expect((await signedPost(a.url, body, ts)).status).toBe(200);
    await eventually(() => expect(launched).toHaveLength(1));
    for (const url of [a.url, b.url]) {
      const replay = await signedPost(url, body, ts);
      expect(replay.status).toBe(401);
      expect(await replay.json()).toEqual({ error: 'unauthorized', message: 'x-slack-signature: this request was already received (a replay)' });
    }
    await finishRuns();
    // Another request (its own trigger and signature), even in the same second, is taken as usual.
    expect((await signedPost(b.url, commandBody('run globex-import', 2), ts)).status).toBe(200);
    await eventually(() => expect(launched).toHaveLength(2));
    expect(launched).toHaveLength(2);
  });

  it("Slack's own retry of a request already taken (X-Slack-Retry-Num) is acknowledged empty and does nothing", async () => {
    const ts = Math.floor(systemClock.now().getTime() / 1000);
    const body = commandBody('run globex-import', 3);
    await finishRuns();
    const before = launched.length;
    expect((await signedPost(a.url, body, ts)).status).toBe(200);
    await eventually(() => expect(launched).toHaveLength(before + 1));
    const retry = await signedPost(b.url, body, ts, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe('');
    expect(launched).toHaveLength(before + 1);
  });

  it('one refused in words (text that cannot be taken) is answered once; sent again, it is a replay like any other (was: answered again)', async () => {
    const ts = Math.floor(systemClock.now().getTime() / 1000);
    const body = commandBody(`run ${'x'.repeat(4001)}`, 4);
    const first = await signedPost(a.url, body, ts);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { text: string }).text).toMatch(/^I couldn't take that command: it is 4,005 characters long/);
    for (const url of [a.url, b.url]) {
      const replay = await signedPost(url, body, ts);
      expect(replay.status).toBe(401);
      expect(await replay.json()).toEqual({ error: 'unauthorized', message: 'x-slack-signature: this request was already received (a replay)' });
    }
  });
});
