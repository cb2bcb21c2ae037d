/**
 * Headers a webhook destination may be configured with (`headers`), and how
 * they meet the ones the bot sets itself. HTTP header names are
 * case-insensitive, and `fetch` joins two names that differ only in case into
 * one combined value (`Idempotency-Key: mine, the-bot's`), so a configured
 * `idempotency-key` or `x-scheduler-signature` would corrupt the very headers
 * a receiver deduplicates and verifies by. The bot's own always win.
 */

/** Headers the bot sets on every webhook request, and ones the HTTP client owns. Lower case. */
const OWN_HEADERS = ['content-type', 'content-length', 'user-agent', 'idempotency-key', 'host', 'transfer-encoding', 'connection'];
/** Every `X-Scheduler-*` header is the bot's (timestamp, signature, event, and any added later). */
const OWN_PREFIX = 'x-scheduler-';

/** Why a configured header name cannot be used (the bot sets it), or undefined when it can. */
export function reservedHeaderReason(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  if (lower.startsWith(OWN_PREFIX)) return `header "${name}" is set by the bot itself (every X-Scheduler-* header is); remove it`;
  if (OWN_HEADERS.includes(lower)) return `header "${name}" is set by the bot itself; remove it`;
  return undefined;
}

/**
 * The headers of one webhook request: the configured ones, less any the bot
 * reserves (by name, in any case), then the bot's own. Configuration is
 * refused such names when it is written; this keeps rows stored before that
 * check (or a hand-edited tenant) from changing what the bot sends.
 */
export function webhookRequestHeaders(configured: Record<string, string> | undefined, own: Record<string, string>): Record<string, string> {
  const allowed = Object.entries(configured ?? {}).filter(([name]) => reservedHeaderReason(name) === undefined);
  return withOwnHeaders(Object.fromEntries(allowed), own);
}

/** `headers` and then `own`, a name of `headers` that `own` also has (in any case) left out rather than combined. */
export function withOwnHeaders(headers: Record<string, string> | undefined, own: Record<string, string>): Record<string, string> {
  const ownNames = new Set(Object.keys(own).map((n) => n.toLowerCase()));
  const kept = Object.entries(headers ?? {}).filter(([name]) => !ownNames.has(name.trim().toLowerCase()));
  return { ...Object.fromEntries(kept), ...own };
}
