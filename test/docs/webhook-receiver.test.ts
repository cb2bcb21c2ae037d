import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { signLaunchRequest } from '../../src/launch/signature.js';

/**
 * The receiver of docs/destinations.md, run as written (its imports given to
 * it, its port chosen by the system), with what it logs for each event it
 * acts on collected.
 */
function startDocumentedReceiver(secret: string): { server: Server; handled: unknown[][] } {
  const page = readFileSync('docs/destinations.md', 'utf8');
  const snippet = [...page.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1]!).find((code) => code.includes('X-Scheduler-Signature'));
  if (!snippet) throw new Error('docs/destinations.md has no receiver snippet');
  const body = snippet.replace(/^import .*$/gm, '').replace(/app\.listen\(\d+\);/, 'return app.listen(0, "127.0.0.1");');
  const handled: unknown[][] = [];
  const run = new Function('createHmac', 'timingSafeEqual', 'express', 'process', 'console', body) as (...args: unknown[]) => Server;
  const server = run(createHmac, timingSafeEqual, express, { env: { WEBHOOK_SECRET: secret } }, { log: (...args: unknown[]) => handled.push(args) });
  return { server, handled };
}

let server: Server | undefined;
afterEach(() => server?.close());

describe('the webhook receiver of docs/destinations.md', () => {
  it('acts once on a delivery replayed with another Idempotency-Key: only what the signature covers is trusted', async () => {
    const secret = 'whsec_0123456789abcdef';
    const receiver = startDocumentedReceiver(secret);
    server = receiver.server;
    await new Promise<void>((resolve) => (server!.listening ? resolve() : server!.once('listening', () => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/scheduler`;
    const key = 'alert:12:event:40:webhook:ops.acme.example.com/3f9c2a7e51d08b64';
    const payload = JSON.stringify({ idempotencyKey: key, event: 'escalated', tenant: { id: 'acme' }, workflow: { name: 'quality-check' }, alert: { severity: 'critical' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signed = { 'Content-Type': 'application/json', 'X-Scheduler-Timestamp': String(timestamp), 'X-Scheduler-Signature': signLaunchRequest(secret, timestamp, payload) };
    const post = (idempotencyKey: string) => fetch(url, { method: 'POST', headers: { ...signed, 'Idempotency-Key': idempotencyKey }, body: payload });

    expect((await post(key)).status).toBe(204);
    // The bot's own redelivery, and a captured request replayed within the freshness window under a key of the replayer's choosing:
    // the header is not signed, the body's idempotencyKey is.
    expect((await post(key)).status).toBe(204);
    expect((await post('replayed-under-another-key')).status).toBe(204);
    expect(receiver.handled).toHaveLength(1);
    // Tampering with what is signed is refused.
    const forged = await fetch(url, { method: 'POST', headers: { ...signed, 'Idempotency-Key': 'x' }, body: payload.replace('acme', 'evil') });
    expect(forged.status).toBe(401);
  });
});
