import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackRequestGuard } from '../../src/slack/listeners/request-guard.js';

/**
 * Slack sends each request whole at once. A caller that trickles a body to
 * /slack/events (no signature can be checked before the body is in) had each
 * connection's buffer held until the server's 120-second request timeout:
 * many of them, up to 4 MB each, are the bot's memory. A body that has not
 * arrived by the deadline is answered 408 and its connection closed.
 */

const SECRET = 'slow-body-signing-secret-0123456789';
let server: Server;
let port: number;
const reached: string[] = [];

beforeAll(async () => {
  const app = express();
  app.post('/slack/events', ...slackRequestGuard(SECRET, Date.now, { bodyDeadlineMs: 300 }), (req, res) => {
    reached.push(String((req as typeof req & { rawBody?: Buffer }).rawBody));
    res.status(200).end();
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `head` and `sent` bytes of the body, then nothing more; resolves when the server answers and closes, or after `giveUpMs`. */
function stall(head: string, sent: string, giveUpMs = 5_000): Promise<{ closed: boolean; answer: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const end = (closed: boolean) => {
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closed, answer });
    };
    const giveUp = setTimeout(() => end(false), giveUpMs);
    socket.on('data', (d) => (answer += String(d)));
    socket.on('close', () => end(true));
    socket.on('error', () => undefined);
    socket.write(head + sent);
  });
}

function signedHead(body: string, length = Buffer.byteLength(body), extra = ''): string {
  const ts = Math.floor(Date.now() / 1000);
  const sig = `v0=${createHmac('sha256', SECRET).update(`v0:${ts}:${body}`).digest('hex')}`;
  return `POST /slack/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\nx-slack-request-timestamp: ${ts}\r\nx-slack-signature: ${sig}\r\ncontent-length: ${length}\r\n${extra}\r\n`;
}

describe('a Slack request whose body does not arrive in time', () => {
  it('is answered 408 and its connection closed, without waiting for the rest; nothing reaches a listener', async () => {
    const r = await stall(signedHead('', 3 * 1024 * 1024), 'x'.repeat(64 * 1024));
    expect(r.closed).toBe(true);
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.answer).toContain('"error":"request_timeout"');
    expect(reached).toEqual([]);
  });

  it('a whole, signed request is handed on as before', async () => {
    const body = 'command=%2Fscheduler&user_id=U1&channel_id=C1&text=help';
    const r = await stall(signedHead(body, Buffer.byteLength(body), 'connection: close\r\n'), body);
    expect(r.answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(reached).toEqual([body]);
  });
});
