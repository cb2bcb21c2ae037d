import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, T0 } from '../helpers/factories.js';
import { eventually, SIGNING_SECRET, slackSignature } from '../helpers/slack-bolt.js';

/** The whole replica (src/app.ts) in HTTP mode: Slack shares the port with the API and health. */
let t: TestDatabase;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  const clock = new ManualClock(T0);
  slack = await RecordingSlackApi.start({ clock });
  app = await startTestApp(t, { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.url }, { clock });
});
afterAll(async () => {
  await app.stop();
  await slack.close();
  await t.drop();
});

async function post(body: string, secret = SIGNING_SECRET) {
  const ts = Math.floor(systemClock.now().getTime() / 1000);
  return fetch(`${app.url}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(secret, ts, body) },
    body,
  });
}

describe('Slack inside the app', () => {
  it('answers a signed /scheduler on the app port and refuses an unsigned one', async () => {
    const form = (id: string) => new URLSearchParams({ command: '/scheduler', text: 'help', user_id: 'U0ALICE', channel_id: 'CACME', team_id: 'T0TEST', response_url: slack.responseUrl(id), trigger_id: 'x' }).toString();
    expect((await post(form('bad'), 'wrong-secret')).status).toBe(401);
    expect((await post(form('good'))).status).toBe(200);
    const r = await eventually(() => slack.responses.find((x) => x.id === 'good') ?? Promise.reject(new Error('no answer yet')));
    expect(r.body.text).toContain('/scheduler status [workflow]');
    expect(slack.responses.find((x) => x.id === 'bad')).toBeUndefined();
  });

  it('still serves health next to Slack', async () => {
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});

describe('Slack unreachable when the replica starts', () => {
  it('starts, stays up, and answers signed commands once Slack is back', async () => {
    const down = await RecordingSlackApi.start({ clock: new ManualClock(T0) });
    const url = down.url;
    await down.close(); // nothing listens there while the replica starts
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const replica = await startTestApp(t, { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: url });
    try {
      const ts = Math.floor(systemClock.now().getTime() / 1000);
      const body = new URLSearchParams({ command: '/scheduler', text: 'help', user_id: 'U0ALICE', channel_id: 'CACME', team_id: 'T0TEST', response_url: slack.responseUrl('while-down'), trigger_id: 'x' }).toString();
      const res = await fetch(`${replica.url}/slack/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body) },
        body,
      });
      expect(res.status).toBe(200);
      const r = await eventually(() => slack.responses.find((x) => x.id === 'while-down') ?? Promise.reject(new Error('no answer yet')));
      expect(r.body.text).toContain('/scheduler status [workflow]');
      // Stopped, the replica has settled everything it started; a rejection nobody handled is reported by the next turn.
      await replica.stop();
      await new Promise((resolve) => setImmediate(resolve));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      await replica.stop();
    }
  });
});
