import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRedactor, CREDENTIAL_NAME, jsonForms, urlCredentials, type Cut, type Redactor } from './domain/redact.js';

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
 * Every secret value this process has been given.
 *
 * Two scopes, because a tenant chooses its own secrets' values:
 * - the bot's and the operator's (the configuration, the workflows file,
 *   API tokens): redacted from every text;
 * - a tenant's (launchers and destinations set over the API, and every one
 *   read back from the database): redacted from everything logged, and from
 *   that tenant's own stored text only. Were they redacted everywhere, a
 *   tenant naming "connection refused" as a header's value would blank those
 *   words out of every other tenant's run errors (and change their error
 *   groups).
 *
 * The bot's and the operator's are only ever added: redacting a secret that
 * was since rotated away does no harm. A tenant's scope is read again from
 * the database (`replaceTenantSecrets`).
 *
 * It is process-wide on purpose: run output, error texts and log lines are
 * written from many places, and each passes through `redactSecrets` on its
 * way to storage, so none of them has to be handed the list.
 */
const everywhere = new Set<string>();
const byTenant = new Map<string, Set<string>>();
/** Built when first needed after a change: one per tenant, and one (`ALL`) for logs. */
const redactors = new Map<string, Redactor>();
const ALL = '\u0000all';
/** Log lines: every secret, in each form a JSON line may hold it (jsonForms). */
const LOG_LINE = '\u0000log';

export function rememberSecrets(values: Iterable<string | null | undefined>, tenantId?: string): void {
  const set = tenantId === undefined ? everywhere : (byTenant.get(tenantId) ?? byTenant.set(tenantId, new Set()).get(tenantId)!);
  let added = false;
  for (const v of values) {
    if (typeof v === 'string' && v !== '' && !set.has(v)) {
      set.add(v);
      added = true;
    }
  }
  if (!added) return;
  if (tenantId === undefined) redactors.clear();
  else {
    redactors.delete(tenantId);
    redactors.delete(ALL);
    redactors.delete(LOG_LINE);
  }
}

/**
 * Forgets every secret: for a process that hosts one app after another
 * (the test runner runs test files in one process, vitest.config.ts), never
 * for a running replica, whose bot secrets are remembered once at start.
 */
export function forgetAllSecrets(): void {
  everywhere.clear();
  byTenant.clear();
  redactors.clear();
}

/**
 * Every tenant's own secrets as stored now (`rememberStoredSecrets`): a
 * tenant's scope holds what its launchers hold, so a tenant that keeps
 * setting new values cannot grow every replica's redactor without end.
 */
export function replaceTenantSecrets(scopes: Map<string, string[]>): void {
  byTenant.clear();
  redactors.clear();
  for (const [tenantId, values] of scopes) rememberSecrets(values, tenantId);
}

/**
 * Text with the secrets it may carry replaced. With `tenantId`, text that
 * belongs to that tenant (its runs' output): the bot's secrets and that
 * tenant's. Without, text that may be anyone's (log lines): all of them.
 */
export function redactSecrets(text: string, tenantId?: string, cut?: Cut): string {
  const key = tenantId ?? ALL;
  let redactor = redactors.get(key);
  if (!redactor) {
    const values = tenantId === undefined ? [everywhere, ...byTenant.values()] : [everywhere, byTenant.get(tenantId) ?? []];
    redactor = createRedactor(values.flatMap((v) => [...v]));
    redactors.set(key, redactor);
  }
  return redactor(text, cut);
}

/**
 * A log line (JSON) with every secret replaced, those JSON writes escaped
 * (`pass"word` as `pass\\"word`) included: pino's last step before a line is
 * written (src/log.ts).
 */
export function redactLogLine(line: string): string {
  let redactor = redactors.get(LOG_LINE);
  if (!redactor) {
    redactor = createRedactor(jsonForms([everywhere, ...byTenant.values()].flatMap((v) => [...v])));
    redactors.set(LOG_LINE, redactor);
  }
  return redactor(line);
}

/** The secret values inside a launcher or destination as stored (secrets resolved, header values included). */
export function secretsOfEntry(entry: unknown): string[] {
  if (!entry || typeof entry !== 'object') return [];
  const e = entry as Record<string, unknown>;
  const out: string[] = [];
  for (const field of ['secret', 'routingKey']) if (typeof e[field] === 'string') out.push(e[field] as string);
  // A password in the target's URL (`https://user:pass@host/`), sent as Basic auth, and a credential in its query
  // (`?token=…`): both are logged with the URL.
  if (typeof e.url === 'string') out.push(...urlCredentials(e.url));
  // Headers and variables that carry credentials (Authorization, API keys); others (Accept, …) hold ordinary words.
  for (const map of [e.headers, e.env]) {
    if (!map || typeof map !== 'object') continue;
    for (const [k, v] of Object.entries(map as Record<string, unknown>)) {
      if (!CREDENTIAL_NAME.test(k) || typeof v !== 'string') continue;
      out.push(v);
      // `Bearer <token>`: the token alone may show up too.
      const word = v.split(/\s+/).pop();
      if (word && word !== v) out.push(word);
    }
  }
  return out;
}
