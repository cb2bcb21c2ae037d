import { connect } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A chunked body has no Content-Length to refuse up front. Past the limit it
 * must be answered 413 and the connection closed at once: the body parsers'
 * own 413 came only after reading the body to its end, so a client trickling
 * chunks held the connection (and kept the server reading) until the
 * 120-second request timeout.
 */

const ADMIN = 'admin-token-limits-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-limits-token-0123456789abcd';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let pingKey: string;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  pingKey = (await makeWorkflow(t.db, { tenantId: 'acme', name: 'pinged', cron: '0 2 * * *' })).pingKey!;
  app = await startTestApp(t, { API_TOKEN: ADMIN, SLACK_BOT_TOKEN: 'xoxb-limits-0123456789', SLACK_SIGNING_SECRET: 'limits-signing-secret-0123456789', SLACK_API_URL: 'http://127.0.0.1:9', PLATFORM_CHANNEL: 'CPLAT' });
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

/** Sends `head` then 64 KB chunks every 10 ms, for as long as the server keeps the connection (at most `giveUpMs`). */
function trickleChunked(head: string, giveUpMs = 10_000): Promise<{ closed: boolean; answer: string; sent: number }> {
  return new Promise((resolve) => {
    const socket = connect(app.port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    const chunk = 'x'.repeat(64 * 1024);
    const timer = setInterval(() => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      sent += chunk.length;
    }, 10);
    const end = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closed, answer, sent });
    };
    const giveUp = setTimeout(() => end(false), giveUpMs);
    socket.on('data', (d) => (answer += String(d)));
    socket.on('close', () => end(true));
    socket.on('error', () => undefined);
    socket.write(`${head}transfer-encoding: chunked\r\n\r\n`);
  });
}

describe('a chunked body over the limit is answered 413 and its connection closed, the rest unread', () => {
  it('the API (256 KB)', async () => {
    const r = await trickleChunked(`POST /api/v1/runs HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ACME_TOKEN}\r\ncontent-type: application/json\r\n`);
    expect(r.closed).toBe(true);
    expect(r.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.answer).toContain('{"error":"body_too_large","message":"request body is larger than 262144 bytes"}');
    expect(r.sent).toBeLessThan(4 * 1024 * 1024);
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });

  it('Slack requests (4 MB), before the signature is even looked at', async () => {
    const r = await trickleChunked('POST /slack/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\nx-slack-request-timestamp: 1\r\nx-slack-signature: v0=00\r\n', 20_000);
    expect(r.closed).toBe(true);
    expect(r.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.answer).toContain('{"error":"body_too_large","message":"request body is larger than 4194304 bytes"}');
    expect(r.sent).toBeLessThan(16 * 1024 * 1024);
  }, 30_000);

  it('a ping with a valid key (10 MB)', async () => {
    const r = await trickleChunked(`POST /ping/${pingKey}/fail HTTP/1.1\r\nhost: x\r\n`, 20_000);
    expect(r.closed).toBe(true);
    expect(r.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.sent).toBeLessThan(30 * 1024 * 1024);
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual([]);
  }, 30_000);

  it('a compressed ping counts the bytes sent too: gzip members holding nothing (11 MB of them) are refused 413, not read to their end', async () => {
    // Each empty member is 20 bytes that inflate to none: counting only what inflates, the bot read any number of them.
    const empty = gzipSync(Buffer.alloc(0));
    const body = Buffer.concat(Array.from({ length: Math.ceil((11 * 1024 * 1024) / empty.length) }, () => empty));
    const answer = await fetch(`${app.url}/ping/${pingKey}/fail`, { method: 'POST', body, headers: { 'content-encoding': 'gzip' } }).catch((error: unknown) => error);
    // Refused at the first byte past 10 MB, its connection closed: fetch sees the 413, or the close while it still sends.
    if (answer instanceof Response) {
      expect(answer.status).toBe(413);
      expect(await answer.text()).toBe('body larger than 10485760 bytes\n');
    } else expect(String(answer)).toMatch(/fetch failed|other side closed|socket/i);
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual([]);
  }, 30_000);

  it('a ping body in br is refused 415 unread: its decoder keeps a window of up to 16 MB for as long as the body is held open (was: inflated, ~10 MB held per stalled request for 1 MB sent)', async () => {
    const answer = await fetch(`${app.url}/ping/${pingKey}/fail`, { method: 'POST', body: brotliCompressSync(Buffer.from('ERROR: boom\n')), headers: { 'content-encoding': 'br' } });
    expect(answer.status).toBe(415);
    expect(await answer.text()).toBe('content-encoding: "br" is not taken for pings: its decoder holds up to 16 MB per request while the body comes (use gzip, deflate, or none)\n');
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });

  it('a chunked body within the limit is still read and parsed', async () => {
    const body = JSON.stringify({ tenant: 'acme', workflow: 'pinged', status: 'succeeded' });
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(app.port, '127.0.0.1');
      let text = '';
      socket.on('data', (d) => {
        text += String(d);
        if (text.includes('\r\n\r\n') && text.endsWith('}')) socket.end();
      });
      socket.on('close', () => resolve(text));
      socket.write(`POST /api/v1/runs HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ${ACME_TOKEN}\r\ntransfer-encoding: chunked\r\n\r\n`);
      socket.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  });
});
