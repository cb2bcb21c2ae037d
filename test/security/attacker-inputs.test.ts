import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { hashToken } from '../../src/secrets.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { slackSignature } from '../helpers/slack-bolt.js';

/**
 * Inputs an attacker chooses that the earlier catalogues (bad-input, hostile-json, trust-boundaries) did not
 * try, each through the real HTTP server: the answer is a 4xx naming what is wrong, never a 500, and the
 * replica keeps answering everyone else.
 */

const ADMIN = 'admin-token-attacker-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-attacker-token-0123456789abc';
const SIGNING_SECRET = 'attacker-signing-secret-0123456789';

let t: TestDatabase;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(T0);
const acme = () => apiClient(app.url, ACME_TOKEN);

beforeAll(async () => {
  t = await createTestDatabase();
  slack = await RecordingSlackApi.start({ clock });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  for (const timezone of ['UTC', 'Europe/Amsterdam', 'Asia/Kathmandu']) {
    await makeWorkflow(t.db, { tenantId: 'acme', name: `hourly-${timezone.replace('/', '-').toLowerCase()}`, cron: '0 * * * *', timezone, mode: 'observed' });
  }
  app = await startTestApp(t, { API_TOKEN: ADMIN, SLACK_BOT_TOKEN: 'xoxb-attacker-token', SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.url, PLATFORM_CHANNEL: 'CPLAT' }, { clock });
});
afterAll(async () => {
  await app?.stop();
  await slack?.close();
  await t?.drop();
});

const runsOfAcme = () => t.db.selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select('runs.id').where('workflows.tenantId', '=', 'acme').execute();

describe('a run report naming a tick centuries back', () => {
  // The replica's event loop was held for minutes (the fire-time search walked back hour by hour through the
  // centuries, the zone's wall clock read a century off before year 100): this test then ran into its timeout.
  it.each(['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '0099-06-30T12:00:00Z', '1969-12-31T23:00:00Z'])('%s: 400 naming body.tick, at once; nothing stored', { timeout: 20_000 }, async (tick) => {
    for (const workflow of ['hourly-utc', 'hourly-europe-amsterdam', 'hourly-asia-kathmandu']) {
      const res = await acme()('POST', '/api/v1/runs', { tenant: 'acme', workflow, status: 'failed', tick });
      expect(res.status).toBe(400);
      expect(res.body.issues).toEqual([`body: tick: must be 1970-01-01T00:00:00.000Z or later (got ${JSON.stringify(tick)})`]);
    }
    expect(await runsOfAcme()).toEqual([]);
    expect((await fetch(`${app.url}/healthz`)).status).toBeLessThan(500);
  });

  it('the epoch itself is a tick like any other', async () => {
    const res = await acme()('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'hourly-utc', status: 'running', tick: '1970-01-01T00:00:00Z' });
    expect(res.status).toBe(201);
    expect(res.body.tick).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('a run\'s logUrl, shown as a link by every destination', () => {
  it.each(['javascript:alert(document.cookie)', 'file:///etc/passwd', 'data:text/html,<script>x</script>', 'https://ci.example.com/a b', 'https://ci.example.com/"><img src=x>', `https://ci.example.com/${'x'.repeat(2000)}`])(
    '%s: 400 naming body.logUrl; nothing stored',
    async (logUrl) => {
      const before = await runsOfAcme();
      const res = await acme()('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'hourly-utc', status: 'failed', error: 'boom', logUrl });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^body: logUrl: must be an http\(s\) URL/);
      expect(await runsOfAcme()).toEqual(before);
    },
  );

  it('an http(s) link is kept as sent', async () => {
    const res = await acme()('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'hourly-utc', status: 'failed', error: 'boom', logUrl: 'https://ci.example.com/build/7?tab=log#L10' });
    expect(res.status).toBe(201);
    const row = await t.db.selectFrom('runs').select('logUrl').where('id', '=', (res.body as { id: number }).id).executeTakeFirstOrThrow();
    expect(row.logUrl).toBe('https://ci.example.com/build/7?tab=log#L10');
  });
});

describe('a compressed body that does not inflate', () => {
  it.each(['gzip', 'deflate', 'br'])('Content-Encoding %s over plain bytes: 400 saying so, never a 500; nothing stored', async (encoding) => {
    const before = await runsOfAcme();
    const res = await acme()('POST', '/api/v1/runs', JSON.stringify({ tenant: 'acme', workflow: 'hourly-utc', status: 'failed' }), { 'content-type': 'application/json', 'content-encoding': encoding });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(new RegExp(`^body: not valid ${encoding} data \\(.+\\)$`)) });
    expect(await runsOfAcme()).toEqual(before);
  });

  it('a gzip body that does inflate is read as before', async () => {
    const res = await fetch(`${app.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACME_TOKEN}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ tenant: 'acme', workflow: 'hourly-utc', status: 'failed', externalId: 'gz-1' })),
    });
    expect(res.status).toBe(201);
  });

  it('to /slack/events, signed or not: a 4xx without a stack trace', async () => {
    const body = 'payload=%7B%7D';
    const ts = Math.floor(Date.now() / 1000);
    const res = await fetch(`${app.url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body) },
      body,
    });
    const text = await res.text();
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(text).not.toMatch(/ at |node_modules|\/work\//);
  });
});
