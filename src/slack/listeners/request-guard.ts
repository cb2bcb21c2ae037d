import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import express from 'express';
import { z } from 'zod';
import { boundedBody } from '../../http/body-limit.js';
import { unstorableStringIn } from '../../http/input-guards.js';
import { COMMAND_TEXT_MAX, refusedInWords } from './refused-in-words.js';

/** Slack's own window: a request more than this far from now, either way, is refused. */
const MAX_SKEW_SECONDS = 5 * 60;
// Bolt's own limit (4 MB); a larger body is refused here, 413 with a JSON reason (the API's), its rest unread.
const BODY_LIMIT = '4mb';
const BODY_LIMIT_BYTES = 4 * 1024 * 1024;
const readBody = express.raw({ type: () => true, limit: BODY_LIMIT });

const id = z.string().min(1).max(255);
const user = z.object({ id });

/** The parts of each payload type that Bolt's own code reads before any listener runs; anything else is the listeners' to parse. */
const interactive = z.discriminatedUnion('type', [
  z.object({ type: z.literal('block_actions'), user, actions: z.array(z.object({ action_id: id, type: z.string().optional() })).min(1).max(25) }),
  z.object({ type: z.literal('view_submission'), user, view: z.object({ id, callback_id: z.string().max(255) }) }),
  z.object({ type: z.literal('view_closed'), user, view: z.object({ id, callback_id: z.string().max(255) }) }),
  z.object({ type: z.literal('shortcut'), user, callback_id: id }),
  z.object({ type: z.literal('message_action'), user, callback_id: id }),
  z.object({ type: z.literal('block_suggestion'), user, action_id: id }),
]);
const command = z.object({ command: z.string().regex(/^\/\S{1,80}$/), user_id: id, channel_id: id, team_id: id.optional(), text: z.string().max(COMMAND_TEXT_MAX).optional() });
const eventsBody = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url_verification'), challenge: z.string().max(255) }),
  z.object({ type: z.literal('event_callback'), event: z.object({ type: id }) }),
  z.object({ type: z.literal('app_rate_limited') }),
]);

/**
 * Slack sends a request whole at once (it waits 3 seconds for the answer),
 * so a body still arriving after this is not Slack's: it is answered 408 and
 * its connection closed, and what was buffered of it is let go. Without it an
 * anonymous caller could trickle up to 4 MB on each of many connections, each
 * held in memory until the server's 120-second request timeout, before any
 * signature could be checked.
 */
const BODY_DEADLINE_MS = 10_000;

function bodyDeadline(ms: number): RequestHandler {
  return (req, res, next) => {
    if (req.complete) return next();
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.set('connection', 'close').status(408).json({ error: 'request_timeout', message: `the request body did not arrive within ${ms / 1000} seconds` });
    }, ms);
    timer.unref();
    const done = () => clearTimeout(timer);
    req.once('end', done);
    res.once('close', done);
    next();
  };
}

function problem(error: z.ZodError): string {
  const first = error.issues[0];
  return `${first?.path.join('.') || '(payload)'}: ${first?.message ?? 'unexpected shape'}`;
}

/** Why a verified body cannot be handed to Bolt, or undefined when it can. */
export function payloadProblem(raw: string, contentType: string | undefined): string | undefined {
  if (raw.includes('\u0000')) return 'body: NUL characters are not allowed';
  if (contentType?.startsWith('application/json')) {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return 'body: not valid JSON';
    }
    const parsed = eventsBody.safeParse(json);
    return parsed.success ? unstorableStringIn(json, 'body') : problem(parsed.error);
  }
  const form = new URLSearchParams(raw);
  if (form.has('ssl_check')) return undefined;
  const payload = form.get('payload');
  if (payload !== null) {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return 'payload: not valid JSON';
    }
    const parsed = interactive.safeParse(json);
    return parsed.success ? unstorableStringIn(json, 'payload') : `payload.${problem(parsed.error)}`;
  }
  const fields = Object.fromEntries(form);
  const parsed = command.safeParse(fields);
  return parsed.success ? unstorableStringIn(fields, 'body') : problem(parsed.error);
}

/**
 * How long a taken signature is kept: past the five minutes either way a
 * timestamp is accepted, with as much again for replicas whose clocks differ.
 */
const SEEN_KEEP_SECONDS = 2 * MAX_SKEW_SECONDS;

export interface SlackGuardOptions {
  bodyDeadlineMs?: number;
  /**
   * Takes a verified request's signature once across replicas (src/ledger/slack-requests.ts):
   * false when it was taken before. A signed request is good for five minutes, so one
   * captured and sent again within them is refused (401), Slack's own retry of it acked empty.
   */
  firstReceipt?: (signature: string, slackTs: number, nowSeconds: number, keepSeconds: number) => Promise<boolean>;
}

/**
 * In front of Bolt on POST /slack/events: checks the signature and the
 * timestamp in both directions (Bolt refuses only old ones), then the shape
 * of the parts Bolt's own code reads (a `"user": null` would throw inside
 * Bolt, a 500). A bad signature or timestamp is 401 and a bad shape 400, with
 * a reason (text a person typed that cannot be taken is answered to them in
 * words instead, `refusedInWords`); either way no listener runs. A signature already taken (a replay
 * within the five minutes) is 401 too (`firstReceipt`), checked before the shape, so a replay of a
 * request refused in words gets no answer but the 401. The raw body is handed on as
 * `rawBody`, which Bolt reads instead of the consumed stream. Real time here:
 * signatures are Slack's clock against the machine's, not business time.
 */
export function slackRequestGuard(signingSecret: string, now: () => number = Date.now, options: SlackGuardOptions = {}): RequestHandler[] {
  return [
    bodyDeadline(options.bodyDeadlineMs ?? BODY_DEADLINE_MS),
    // Refused before reading when its length says so, and at the first byte past the limit when it has none (chunked).
    boundedBody(readBody, BODY_LIMIT_BYTES),
    async (req, res, next) => {
      const raw: string = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const timestamp = Number(req.get('x-slack-request-timestamp'));
      const signature = req.get('x-slack-signature') ?? '';
      if (!Number.isSafeInteger(timestamp)) return void res.status(401).json({ error: 'unauthorized', message: 'x-slack-request-timestamp: missing or not a number' });
      if (Math.abs(Math.floor(now() / 1000) - timestamp) > MAX_SKEW_SECONDS) {
        return void res.status(401).json({ error: 'unauthorized', message: 'x-slack-request-timestamp: more than 5 minutes from now' });
      }
      const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
      const a = Buffer.from(expected);
      const b = Buffer.from(signature);
      if (a.length !== b.length || !timingSafeEqual(a, b)) return void res.status(401).json({ error: 'unauthorized', message: 'x-slack-signature: does not match' });
      if (options.firstReceipt) {
        let first: boolean;
        try {
          first = await options.firstReceipt(signature, timestamp, Math.floor(now() / 1000), SEEN_KEEP_SECONDS);
        } catch {
          return void res.status(503).set('retry-after', '5').json({ error: 'unavailable', message: 'could not check the request against the ones already received; try again' });
        }
        if (!first) {
          // Slack's own retry of a request already taken: acknowledged empty, as dropSlackRetries does (retries.ts).
          if (req.get('x-slack-retry-num') !== undefined) return void res.status(200).end();
          return void res.status(401).json({ error: 'unauthorized', message: 'x-slack-signature: this request was already received (a replay)' });
        }
      }
      // After the replay check: a request refused in words is answered once, like any other.
      const bad = payloadProblem(raw, req.get('content-type'));
      if (bad) {
        const words = refusedInWords(raw, req.get('content-type'), bad);
        return void (words ? res.status(200).json(words) : res.status(400).json({ error: 'invalid_request', message: bad }));
      }
      (req as typeof req & { rawBody?: Buffer }).rawBody = req.body as Buffer;
      next();
    },
  ];
}
