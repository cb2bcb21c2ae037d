import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SlackFault, SlackMetadata } from './recording-slack-types.js';

/** Reading requests and writing answers for the recording Slack stand-in. */

export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function isMetadata(v: unknown): v is SlackMetadata {
  return typeof v === 'object' && v !== null && typeof (v as SlackMetadata).event_type === 'string';
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Web API clients send forms whose object-valued fields are JSON text; response_url posts are JSON. */
export function parseBody(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (!raw) return {};
  if (contentType?.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    out[k] = /^[[{]/.test(v) ? safeJson(v) : v;
  }
  return out;
}

function safeJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Answers a call with a fault that refuses it before anything is stored. */
export function refuse(req: IncomingMessage, res: ServerResponse, fault: Exclude<SlackFault, { kind: 'lost' | 'slow' | 'applied_error' }>): void {
  switch (fault.kind) {
    case 'http_429':
      res.setHeader('Retry-After', String(fault.retryAfterSeconds));
      return sendJson(res, 429, { ok: false, error: 'ratelimited' });
    case 'http_500':
      return sendJson(res, 500, { ok: false, error: 'internal_error' });
    case 'ratelimited':
      return sendJson(res, 200, { ok: false, error: 'ratelimited' });
    case 'platform_error':
      return sendJson(res, 200, { ok: false, error: fault.error });
    case 'reset':
      req.socket.destroy();
      return;
  }
}
