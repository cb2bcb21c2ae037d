/**
 * Headers a webhook destination may be configured with (`headers`), and how
 * they meet the ones the bot sets itself. HTTP header names are
 * case-insensitive, and `fetch` joins two names that differ only in case into
 * one combined value (`Idempotency-Key: mine, the-bot's`), so a configured
 * `idempotency-key` or `x-scheduler-signature` would corrupt the very headers
 * a receiver deduplicates and verifies by. The bot's own always win.
 */

/** Headers that frame or route the request, which the HTTP client sets: a configured Host reaches another virtual host behind the target. Lower case. */
const FRAMING_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect'];
/** Headers the bot sets on every request, by who sends it: a webhook destination, or an http launcher. Lower case. */
const OWN_HEADERS = {
  webhook: ['content-type', 'user-agent', 'idempotency-key', ...FRAMING_HEADERS],
  launcher: ['content-type', ...FRAMING_HEADERS],
};
/** Every `X-Scheduler-*` header is the bot's (timestamp, signature, event, and any added later). */
const OWN_PREFIX = 'x-scheduler-';

export type HeaderUse = keyof typeof OWN_HEADERS;

/** Why a configured header name cannot be used (the bot sets it), or undefined when it can. */
export function reservedHeaderReason(name: string, use: HeaderUse = 'webhook'): string | undefined {
  const lower = name.trim().toLowerCase();
  if (lower.startsWith(OWN_PREFIX)) return `header "${name}" is set by the bot itself (every X-Scheduler-* header is); remove it`;
  if (OWN_HEADERS[use].includes(lower)) return `header "${name}" is set by the bot itself; remove it`;
  return undefined;
}

/** An HTTP token (RFC 9110): what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header value may not hold (Node refuses to send it): CR, LF and other control characters, or beyond Latin-1. */
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Why a configured header cannot be sent (a bad name, a CR/LF in its value, one the bot sets), or undefined when it can. */
export function headerProblem(name: string, value: string, use: HeaderUse): string | undefined {
  if (!HEADER_NAME.test(name)) return "not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)";
  if (BAD_HEADER_VALUE.test(value)) return 'a header value cannot hold line breaks or control characters';
  return reservedHeaderReason(name, use);
}

/** An http launcher's request headers: as `webhookRequestHeaders`, for a launcher stored before its headers were checked. */
export function launcherRequestHeaders(configured: Record<string, string> | undefined, own: Record<string, string>): Record<string, string> {
  const allowed = Object.entries(configured ?? {}).filter(([name, value]) => headerProblem(name, value, 'launcher') === undefined);
  return withOwnHeaders(Object.fromEntries(allowed), own);
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
