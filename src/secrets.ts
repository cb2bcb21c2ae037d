import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRedactor, urlPasswords, type Redactor } from './domain/redact.js';

/** API tokens and ping keys are high-entropy, so a plain SHA-256 is a sound stored form. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function newToken(prefix = 'sbt_'): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`;
}

/** 128 bits, 22 base64url characters: the length a chosen key must also have (PING_KEY_MIN_LENGTH). */
export function newPingKey(): string {
  return randomBytes(16).toString('base64url');
}

/** Constant-time comparison of two hex digests (or any two strings). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Every secret value this process has been given (its configuration, tenants'
 * tokens, launcher and destination secrets as they are synced or set). It is
 * process-wide on purpose: run output, error texts and log lines are written
 * from many places, and each passes through `redactSecrets` on its way to
 * storage, so none of them has to be handed the list. Values are only ever
 * added: redacting a secret that was since rotated away does no harm.
 */
const known = new Set<string>();
let redactor: Redactor = createRedactor(known);

export function rememberSecrets(values: Iterable<string | null | undefined>): void {
  let added = false;
  for (const v of values) {
    if (typeof v === 'string' && v !== '' && !known.has(v)) {
      known.add(v);
      added = true;
    }
  }
  if (added) redactor = createRedactor(known);
}

export function redactSecrets(text: string): string {
  return redactor(text);
}

const CREDENTIAL_HEADER = /auth|token|key|secret|signature|cookie|password|credential/i;

/** The secret values inside a launcher or destination as stored (secrets resolved, header values included). */
export function secretsOfEntry(entry: unknown): string[] {
  if (!entry || typeof entry !== 'object') return [];
  const e = entry as Record<string, unknown>;
  const out: string[] = [];
  for (const field of ['secret', 'routingKey']) if (typeof e[field] === 'string') out.push(e[field] as string);
  // A password in the target's URL (`https://user:pass@host/`): it is sent as Basic auth, and logged with the URL.
  if (typeof e.url === 'string') out.push(...urlPasswords(e.url));
  // Headers and variables that carry credentials (Authorization, API keys); others (Accept, …) hold ordinary words.
  for (const map of [e.headers, e.env]) {
    if (!map || typeof map !== 'object') continue;
    for (const [k, v] of Object.entries(map as Record<string, unknown>)) {
      if (!CREDENTIAL_HEADER.test(k) || typeof v !== 'string') continue;
      out.push(v);
      // `Bearer <token>`: the token alone may show up too.
      const word = v.split(/\s+/).pop();
      if (word && word !== v) out.push(word);
    }
  }
  return out;
}
