import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Request } from 'express';
import { Router } from 'express';
import type { Deps } from '../deps.js';
import { PING_BODY_HARD_LIMIT, PING_BODY_LIMIT, PING_TAIL_BYTES, pingBodyEncoding, pingBodyTooLarge, pingExcerpt, type PingBodyEncoding } from '../domain/ping-body.js';
import { metrics } from '../metrics.js';
import { pingParameters, pingSignal } from '../domain/ping-parameters.js';
import { pingKeyTenant, recordPing } from '../services/pings.js';
import { UnknownPingLimiter } from './unknown-ping-limiter.js';
import { TenantReportLimiter } from './tenant-report-limiter.js';

type PingBody = { body: string; tooLarge: false; invalid?: undefined } | { body: ''; tooLarge: true } | { body: ''; tooLarge: false; invalid: string };

const INFLATE: Record<Exclude<PingBodyEncoding, 'identity'>, () => import('node:zlib').Gunzip | import('node:zlib').Inflate> = {
  gzip: createGunzip,
  deflate: createInflate,
};

/**
 * Keeps the body's first PING_BODY_LIMIT and last PING_TAIL_BYTES bytes and
 * drains the rest, so `curl --data-binary @big.log` records the start and
 * the end of the log instead of failing (what is kept: src/domain/ping-body.ts).
 * A compressed body is inflated first: its limits count the inflated bytes,
 * and the hard limit the bytes sent as well (`pingBodyTooLarge`).
 */
function readPingBody(req: Request, encoding: PingBodyEncoding): Promise<PingBody> {
  return new Promise((resolve, reject) => {
    const inflate = encoding === 'identity' ? undefined : INFLATE[encoding]();
    const source: Readable = inflate ? req.pipe(inflate) : req;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let tail = Buffer.alloc(0);
    let total = 0;
    let sent = 0;
    let refused = false;
    const tooLarge = () => {
      if (!pingBodyTooLarge(sent, total)) return false;
      if (refused) return true;
      refused = true;
      req.unpipe();
      inflate?.destroy();
      req.pause();
      resolve({ body: '', tooLarge: true });
      return true;
    };
    if (inflate) {
      req.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        tooLarge();
      });
    }
    source.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (tooLarge()) return;
      if (keptBytes < PING_BODY_LIMIT) {
        const part = chunk.subarray(0, PING_BODY_LIMIT - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > PING_TAIL_BYTES) tail = tail.subarray(tail.length - PING_TAIL_BYTES);
    });
    source.on('end', () => resolve({ body: pingExcerpt(Buffer.concat(kept), tail, total), tooLarge: false }));
    // Bytes that do not inflate are the caller's mistake (a 400), never a 500.
    inflate?.on('error', (error) => {
      req.unpipe();
      resolve({ body: '', tooLarge: false, invalid: `body: not valid ${encoding} data (${error.message})` });
    });
    req.on('error', reject);
  });
}

/**
 * GET|POST /ping/<key>[/start|/fail|/<exit code>][?rid=…] (the suffix read by `pingSignal`). Plain-text answers,
 * like Healthchecks, so `curl -fsS` fails loudly only when something is wrong.
 * The key is the credential and is never logged.
 */
export function pingRoutes(deps: Deps, reports = new TenantReportLimiter(deps.config.TENANT_REPORTS_PER_MINUTE)): Router {
  const router = Router();
  const limiter = new UnknownPingLimiter(deps.config.PING_UNKNOWN_PER_MINUTE);
  const handle = async (req: Request, res: import('express').Response) => {
    const { key, signal: rawSignal } = req.params as { key: string; signal?: string };
    // Read before the key is looked up: the same answer for every key, so it tells no guess from a key.
    const asked = pingSignal(rawSignal);
    if (!asked.ok) {
      if (!req.complete) res.set('connection', 'close');
      res.status(400).type('text/plain').send(`${asked.problem}\n`);
      return;
    }
    const { signal } = asked;
    const parameters = pingParameters(req.query as Record<string, unknown>);
    if (!parameters.ok) {
      if (!req.complete) res.set('connection', 'close');
      res.status(400).type('text/plain').send(`${parameters.problem}\n`);
      return;
    }
    const encoding = req.method === 'POST' ? pingBodyEncoding(req.get('content-encoding')) : ({ ok: true, encoding: 'identity' } as const);
    if (!encoding.ok) {
      if (!req.complete) res.set('connection', 'close');
      res.status(415).type('text/plain').send(`${encoding.problem}\n`);
      return;
    }
    const { rid } = parameters;
    const address = req.socket.remoteAddress ?? 'unknown';
    const now = deps.clock.now().getTime();
    // A token is taken before the lookup (a burst cannot all pass before one is charged), and over the allowance a
    // key this address has not used yet is refused unread, valid or not: the answer must not tell a guess from a key.
    const admission = limiter.admit(address, key, now);
    if (!admission.ok) {
      metrics.pings.inc({ signal: signal.kind, result: 'rate_limited' });
      if (!req.complete) res.set('connection', 'close');
      res.status(429).set('retry-after', String(admission.retryAfterSeconds)).type('text/plain').send('too many unknown ping keys from this address; retry later\n');
      return;
    }
    // The key before the body: one indexed lookup, so a made-up key never makes the server read (up to 10 MB of) a body.
    const unknown = () => {
      limiter.forget(address, key);
      metrics.pings.inc({ signal: signal.kind, result: 'not_found' });
      // A body still on its way is not read: the connection closes after the answer instead of draining it (the 400s above too).
      if (!req.complete) res.set('connection', 'close');
      res.status(404).type('text/plain').send('not found\n');
    };
    const tenant = await pingKeyTenant(deps, key);
    if (tenant === undefined) return unknown();
    limiter.proven(address, key, admission, now);
    // The key is the tenant's: its reports past TENANT_REPORTS_PER_MINUTE wait (curl --retry retries a 429), body unread.
    const allowed = reports.admit(tenant, now);
    if (!allowed.ok) {
      metrics.pings.inc({ signal: signal.kind, result: 'tenant_limited' });
      if (!req.complete) res.set('connection', 'close');
      res.status(429).set('retry-after', String(allowed.retryAfterSeconds)).type('text/plain').send(`${allowed.message}\n`);
      return;
    }
    const read: PingBody = req.method === 'POST' ? await readPingBody(req, encoding.encoding) : { body: '', tooLarge: false };
    if (read.tooLarge) {
      res.status(413).set('connection', 'close').type('text/plain').send(`body larger than ${PING_BODY_HARD_LIMIT} bytes\n`);
      return;
    }
    if (read.invalid !== undefined) {
      res.status(400).set('connection', 'close').type('text/plain').send(`${read.invalid}\n`);
      return;
    }
    const { body } = read;
    const result = await recordPing(deps, { key, signal, rid, body: body || undefined });
    // The workflow was disabled (or its key changed) between the look-up and the report.
    if (result.kind === 'not_found') return unknown();
    metrics.pings.inc({ signal: signal.kind, result: result.kind });
    res.status(200).type('text/plain').send('OK\n');
  };
  for (const path of ['/:key', '/:key/:signal']) router.route(path).get(handle).post(handle);
  return router;
}
