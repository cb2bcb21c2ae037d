import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ManualClock } from '../../src/clock.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { eventually } from '../runs/support.js';

/**
 * Socket Mode as Slack plays it: the replica asks apps.connections.open (with
 * the app token) for a WebSocket URL, connects, waits for `hello`, then gets
 * envelopes; it acks each by sending back its envelope_id, and answers a
 * slash command on the command's response_url.
 */

let t: TestDatabase;
let slack: RecordingSlackApi;
let wss: WebSocketServer;
let app: Awaited<ReturnType<typeof startTestApp>>;
const connections: { socket: WebSocket; path: string }[] = [];
/** Every message the bot sent on a socket, parsed. */
const fromBot: Record<string, unknown>[] = [];
let seq = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
  await makeWorkflow(t.db, { tenantId: 'globex', name: 'globex-import', cron: '0 * * * *' });

  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (socket, req) => {
    connections.push({ socket, path: req.url ?? '' });
    socket.on('message', (data) => fromBot.push(JSON.parse(data.toString()) as Record<string, unknown>));
    socket.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'applink-test', approximate_connection_time: 18060 }, connection_info: { app_id: 'A0TEST' } }));
  });
  const wsPort = (wss.address() as AddressInfo).port;
  slack = await RecordingSlackApi.start({ clock: new ManualClock(T0), socketModeUrl: `ws://127.0.0.1:${wsPort}/link/?ticket=test-ticket&app_id=A0TEST` });

  // Slack failing the first two apps.connections.open calls must not stop the connection:
  // the Socket Mode client retries them itself (real time: about 1 s, then 1.3 s).
  slack.failNext({ kind: 'http_500' }, { method: 'apps.connections.open', times: 2 });
  // startApp resolves only once Bolt is connected, which needs the hello.
  app = await startTestApp(t, { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_APP_TOKEN: 'xapp-1-A0TEST-test', SLACK_API_URL: slack.url }, { clock: new ManualClock(T0) });
});
afterAll(async () => {
  await app?.stop();
  for (const c of wss?.clients ?? []) c.terminate();
  await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
  await slack?.close();
  await t?.drop();
});

/** Sends a slash command the way Slack does in Socket Mode and returns its envelope id and response_url id. */
function sendSlashCommand(text: string, channel: string) {
  const n = ++seq;
  const envelopeId = `6b0c1e3e-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const responseId = `socket-cmd-${n}`;
  connections.at(-1)!.socket.send(
    JSON.stringify({
      envelope_id: envelopeId,
      type: 'slash_commands',
      accepts_response_payload: true,
      payload: {
        token: 'legacy',
        team_id: 'T0TEST',
        team_domain: 'example',
        channel_id: channel,
        channel_name: 'alerts',
        user_id: 'U0ALICE',
        user_name: 'alice',
        command: '/scheduler',
        text,
        api_app_id: 'A0TEST',
        is_enterprise_install: 'false',
        response_url: slack.responseUrl(responseId),
        trigger_id: `trigger-${n}`,
      },
    }),
  );
  return { envelopeId, responseId };
}

const ackOf = (envelopeId: string) => eventually(() => fromBot.find((m) => m.envelope_id === envelopeId));
const responseOf = (id: string) => eventually(() => slack.responses.find((r) => r.id === id));

describe('Socket Mode', () => {
  it('opens the connection through SLACK_API_URL with the app token, riding out Slack 500s, and connects to the URL it is given', () => {
    const opens = slack.calls.filter((c) => c.method === 'apps.connections.open');
    expect(opens.map((c) => c.outcome)).toEqual(['http_500', 'http_500', 'ok']);
    expect(connections).toHaveLength(1);
    expect(connections[0]!.path).toBe('/link/?ticket=test-ticket&app_id=A0TEST');
  });

  it('acks a slash command envelope and answers `/scheduler help` on its response_url', async () => {
    const { envelopeId, responseId } = sendSlashCommand('help', 'CACME');
    expect(await ackOf(envelopeId)).toEqual({ envelope_id: envelopeId, payload: {} });
    const response = await responseOf(responseId);
    expect(response.body).toMatchObject({ response_type: 'ephemeral' });
    expect(String(response.body.text)).toContain('/scheduler status');
  });

  it('answers `/scheduler status` in a tenant channel with that tenant’s workflows only', async () => {
    const { envelopeId, responseId } = sendSlashCommand('status', 'CACME');
    await ackOf(envelopeId);
    const response = await responseOf(responseId);
    const shown = JSON.stringify(response.body);
    expect(shown).toContain('nightly-pipeline');
    expect(shown).not.toContain('globex-import');
    // Each envelope is acked exactly once.
    expect(fromBot.filter((m) => m.envelope_id === envelopeId)).toHaveLength(1);
  });
});
