import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createWebClient, timedFetch, webOutboxApi } from '../../src/slack/transport/slack-api.js';

/**
 * A Slack that answers but never finishes: the status line and headers at
 * once, then a byte of body now and then, for ever. A socket idle timeout
 * never fires on such an answer; only a deadline on the whole call ends it.
 * A post cut off so is an unknown outcome (Slack may have kept it: the
 * outbox looks for its key before sending again), a read a transient failure,
 * and both end well inside the outbox lease.
 */
let server: Server;
let url: string;
const trickling = new Set<ServerResponse>();
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"ok":true,');
    trickling.add(res);
    const timer = setInterval(() => res.write(' '), 20);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      trickling.delete(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});
afterAll(async () => {
  for (const t of timers) clearInterval(t);
  for (const res of trickling) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('a Slack answer that trickles', () => {
  it('a post ends at the client deadline as an unknown outcome, a read as a transient failure', async () => {
    const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: url, timeoutMs: 200, logger: silentLogger }));
    const posted = await api.postMessage({ channel: 'CACME', text: 'x', blocks: [], metadata: { event_type: 'scheduler_alert', event_payload: {} } as never });
    expect(posted).toMatchObject({ ok: false, kind: 'unknown' });
    const read = await api.replies('CACME', '1.000100');
    expect(read).toMatchObject({ ok: false, kind: 'transient' });
  });

  it("Bolt's own calls (respond, views.open) are cut off too: timedFetch ends a trickling body", async () => {
    const fetch = timedFetch(200);
    // Cut off while the body trickles (or, on a slow machine, before the headers came): either way it ends.
    await expect(fetch(url, { method: 'POST', body: '{}' }).then((r) => r.text())).rejects.toThrow(/timeout|aborted/i);
  });
});
