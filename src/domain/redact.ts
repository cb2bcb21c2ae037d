/**
 * Removes secret values from text before it is stored, shown or posted.
 * Pure: the caller hands in the values (the bot's tokens, tenants' tokens,
 * launcher and destination secrets) and the shapes of secrets it cannot list
 * (API tokens it generated and kept only as digests).
 */

export const REDACTED = '[redacted]';

/** Values shorter than this are not redacted: "abc" would eat ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** Tokens the API generates (`sbt_` + 32 base64url characters): only their digest is kept, so they are found by shape. */
export const GENERATED_TOKEN = /\bsbt_[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/g;

/**
 * A callback launch's per-run token (`sbr_<run id>_` + a 64-hex HMAC, src/launch/signature.ts):
 * derived, never stored, so found by shape (a target that echoes the launch request puts it in the run's output).
 */
export const CALLBACK_TOKEN = /\bsbr_\d{1,15}_[0-9a-f]{64}(?![0-9a-f])/g;

/**
 * Where the text was cut from something longer (a tail of output, an answer
 * read up to a limit). A secret the cut went through is no longer whole, so
 * the value search cannot find it; at a cut edge a fragment of at least
 * MIN_CUT_FRAGMENT characters that only a secret could complete (a suffix of
 * one at the start, a prefix of one at the end) is redacted too.
 */
export interface Cut {
  start?: boolean;
  end?: boolean;
}

export const MIN_CUT_FRAGMENT = 3;

export type Redactor = (text: string, cut?: Cut) => string;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function createRedactor(values: Iterable<string>, shapes: readonly RegExp[] = [GENERATED_TOKEN, CALLBACK_TOKEN]): Redactor {
  // Longest first: a secret that contains another is removed whole.
  const usable = [...new Set([...values].filter((v) => v.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  const literal = usable.length ? new RegExp(usable.map(escapeRegExp).join('|'), 'g') : undefined;
  return (text, cut) => {
    let out = literal ? text.replace(literal, REDACTED) : text;
    for (const shape of shapes) out = out.replace(shape, REDACTED);
    if (cut?.start) out = redactEdge(out, usable, 'start');
    if (cut?.end) out = redactEdge(out, usable, 'end').replace(GENERATED_TOKEN_START, REDACTED);
    return out;
  };
}

/** The beginning of a generated or callback token (GENERATED_TOKEN, CALLBACK_TOKEN) that a cut at the end of the text went through. */
const GENERATED_TOKEN_START = /\b(?:sbt_[A-Za-z0-9_-]{0,31}|sbr_\d{0,15}(?:_[0-9a-f]{0,63})?)$/;

/** The longest fragment at one edge of `text` that is part of a secret cut there, replaced with the marker. */
function redactEdge(text: string, values: readonly string[], edge: 'start' | 'end'): string {
  let longest = 0;
  for (const v of values) {
    for (let n = Math.min(v.length - 1, text.length); n >= MIN_CUT_FRAGMENT && n > longest; n--) {
      const hit = edge === 'start' ? text.startsWith(v.slice(v.length - n)) : text.endsWith(v.slice(0, n));
      if (hit) {
        longest = n;
        break;
      }
    }
  }
  if (longest === 0) return text;
  return edge === 'start' ? REDACTED + text.slice(longest) : text.slice(0, text.length - longest) + REDACTED;
}

/**
 * Every form a secret takes in a JSON text (a log line): itself, and as a JSON
 * string writes it when that differs (a quote, a backslash, a line break or
 * another control character is escaped there, where the value search of the
 * raw value would not find it).
 */
export function jsonForms(values: Iterable<string>): string[] {
  const out: string[] = [];
  for (const v of values) {
    out.push(v);
    const escaped = JSON.stringify(v).slice(1, -1);
    if (escaped !== v) out.push(escaped);
  }
  return out;
}

/** The password of a URL's userinfo (`https://user:pass@host/`), as written and decoded: a credential like any other. */
export function urlPasswords(url: string): string[] {
  try {
    const password = new URL(url).password;
    if (!password) return [];
    let decoded = password;
    try {
      decoded = decodeURIComponent(password);
    } catch {
      // Not percent-encoded text: the written form is the one that shows up.
    }
    return [...new Set([password, decoded])];
  } catch {
    return [];
  }
}

/** Names of headers, variables and URL query parameters whose values are credentials (Authorization, X-Api-Key, `?token=`). */
export const CREDENTIAL_NAME = /auth|token|key|secret|signature|cookie|password|credential/i;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `name=value` pairs of a query (without its `?`), as written. */
function queryPairs(query: string): [string, string][] {
  return query
    .split('&')
    .filter((p) => p.includes('='))
    .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]);
}

/**
 * The credentials a URL carries, as written and decoded: its userinfo
 * password and the values of its query parameters named like a credential
 * (`?token=…`, `?api_key=…`: a CI trigger's token, a signed URL's signature).
 */
export function urlCredentials(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  // The query as stored (what a log line quotes) and as the URL parser writes it (what is sent).
  const written = url.split('#')[0]!.split('?').slice(1).join('?');
  const values = [...queryPairs(written), ...queryPairs(u.search.slice(1))].filter(([name, value]) => value !== '' && CREDENTIAL_NAME.test(decoded(name))).map(([, value]) => value);
  return [...new Set([...urlPasswords(url), ...values.flatMap((v) => [v, decoded(v)])])];
}

/** A URL fit to show: its userinfo password and credential query values (urlCredentials) replaced with the marker. */
export function shownUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  const search = u.search.replace(/([?&])([^=&#]*)=([^&#]+)/g, (all, sep: string, name: string) => (CREDENTIAL_NAME.test(decoded(name)) ? `${sep}${name}=${REDACTED}` : all));
  if (!u.password && search === u.search) return url;
  const userinfo = u.username || u.password ? `${u.username}${u.password ? `:${REDACTED}` : ''}@` : '';
  return `${u.protocol}//${userinfo}${u.host}${u.pathname}${search}${u.hash}`;
}

/**
 * Whose a launcher's secrets are (src/secrets.ts): the operator's, redacted
 * from every text, when the operator set it; else its tenant's, who chose
 * the values, redacted from that tenant's text only.
 */
export function secretScope(launcher: { operatorSet?: boolean } | null | undefined, tenantId: string): string | undefined {
  return launcher?.operatorSet ? undefined : tenantId;
}
