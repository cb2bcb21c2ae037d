import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { counterValue, metrics } from '../../src/metrics.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';

/**
 * scheduler_slack_calls_total{method,result}: `result` is one of a fixed set,
 * whatever Slack (or a proxy at SLACK_API_URL) answers and whatever a failed
 * connection's message says. It used to be the error's text, so every code
 * a proxy made up, and every error message, was a new series.
 */
describe('Slack call metrics', () => {
  let server: Server;
  let url: string;
  let answer: { status: number; body: unknown } = { status: 200, body: { ok: true } };

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const series = async () => (await metrics.slackCalls.get()).values.filter((v) => v.labels.method === 'conversations.replies').map((v) => String(v.labels.result));

  it('labels a failure by its class, never by its text', async () => {
    const api = webOutboxApi(createWebClient('xoxb-test', { apiUrl: url, logger: silentLogger }));
    // A code Slack never documented is permanent (src/slack/transport/classify-error.ts), and counted as `permanent`, not by name.
    const before = await counterValue(metrics.slackCalls, { method: 'conversations.replies', result: 'permanent' });
    for (const code of ['made_up_code_1', 'made_up_code_2', 'made_up_code_3']) {
      answer = { status: 200, body: { ok: false, error: code } };
      expect(await api.replies('C1', '1.000')).toMatchObject({ ok: false, kind: 'permanent', error: code });
    }
    expect(await counterValue(metrics.slackCalls, { method: 'conversations.replies', result: 'permanent' })).toBe(before + 3);
    answer = { status: 200, body: { ok: false, error: 'channel_not_found' } };
    await api.replies('C1', '1.000');
    answer = { status: 200, body: { ok: false, error: 'internal_error' } };
    await api.replies('C1', '1.000');

    // A connection refused: its class, not its message.
    const refused = webOutboxApi(createWebClient('xoxb-test', { apiUrl: 'http://127.0.0.1:1/api/', logger: silentLogger }));
    expect(await refused.replies('C1', '1.000')).toMatchObject({ ok: false, kind: 'transient', error: expect.stringMatching(/^request failed: /) });

    const results = await series();
    expect(results.filter((r) => /made_up| /.test(r))).toEqual([]);
    expect(results).toEqual(expect.arrayContaining(['permanent', 'channel_not_found', 'internal_error', 'request_failed']));
    expect(await counterValue(metrics.slackCalls, { method: 'conversations.replies', result: 'request_failed' })).toBe(1);
  });
});
