/**
 * Cutting and cleaning untrusted text by whole characters. JavaScript strings
 * are UTF-16: `slice(0, n)` can end between the two halves of an emoji,
 * leaving a lone surrogate, which no UTF-8 encoder accepts (Slack's client
 * throws "URI malformed" and the message is never sent). Pure.
 */

const HIGH = (c: number) => c >= 0xd800 && c <= 0xdbff;
const LOW = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** At most `max` UTF-16 units of `text`, never ending inside a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  if (end > 0 && HIGH(text.charCodeAt(end - 1)) && LOW(text.charCodeAt(end))) end--;
  return text.slice(0, end);
}

/** Lone surrogates (half an emoji, or `\ud800` sent on purpose) replaced with U+FFFD, as PostgreSQL stores them. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/** Whether `text` holds a lone surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  LONE_SURROGATE.lastIndex = 0;
  const found = LONE_SURROGATE.test(text);
  LONE_SURROGATE.lastIndex = 0;
  return found;
}

/** The longest link to a run's log that is kept (`logUrl`). */
export const LOG_URL_MAX = 2_000;

/**
 * Whether `url` is a link to open: an absolute http(s) URL with nothing in
 * it that ends a link in Slack's, HTML's or a mail client's markup (space,
 * `<`, `>`, quotes). A run's `logUrl` is the reporter's words: over the API
 * anything else is a 400, from an http launcher's answer it is dropped, and
 * every destination makes a link only of what passes here, never of
 * `javascript:` or `file:`.
 */
export function isWebLink(url: string): boolean {
  return url.length <= LOG_URL_MAX && /^https?:\/\/[^\s<>"'`]+$/i.test(url);
}
