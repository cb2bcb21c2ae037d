/**
 * What of a ping's body becomes the run's log excerpt. Pure.
 *
 * A body up to PING_BODY_LIMIT bytes is kept whole. A longer one keeps its
 * first PING_HEAD_BYTES and its last PING_TAIL_BYTES with a marker between:
 * a job's log ends with what went wrong, and a failure's error is the last
 * line of the excerpt (src/services/pings.ts); keeping only the start made
 * that error the marker itself, and every big failing log one error group.
 */

export const PING_BODY_LIMIT = 100 * 1024;
export const PING_TAIL_BYTES = 4 * 1024;
export const PING_HEAD_BYTES = PING_BODY_LIMIT - PING_TAIL_BYTES;

/** Past this the request is read no further and refused (a stuck client, or abuse of a leaked key). */
export const PING_BODY_HARD_LIMIT = 10 * 1024 * 1024;

/**
 * Whether a ping body has gone past PING_BODY_HARD_LIMIT: in the bytes it
 * holds (`inflated`: a small bomb cannot stand in for gigabytes) or in the
 * bytes sent (`sent`: compressed data may inflate to nothing, such as gzip
 * members holding nothing, 20 bytes each, so counting only what inflates
 * read any number of them until the request timeout).
 */
export function pingBodyTooLarge(sent: number, inflated: number): boolean {
  return sent > PING_BODY_HARD_LIMIT || inflated > PING_BODY_HARD_LIMIT;
}

/**
 * `head`: the body's first bytes (at least PING_BODY_LIMIT of them when it
 * is longer); `tail`: its last bytes (at least PING_TAIL_BYTES when it is
 * longer than PING_BODY_LIMIT); `total`: how many bytes were sent.
 */
export function pingExcerpt(head: Uint8Array, tail: Uint8Array, total: number): string {
  const decode = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (total <= PING_BODY_LIMIT) return decode(head.subarray(0, total));
  // A cut may fall inside a character: its half decodes as U+FFFD, dropped at the edge.
  const first = decode(head.subarray(0, PING_HEAD_BYTES)).replace(/\uFFFD$/, '');
  let last = decode(tail.subarray(Math.max(0, tail.byteLength - PING_TAIL_BYTES))).replace(/^\uFFFD/, '');
  // Start the tail at a whole line when it has one: a line cut in half reads as a different message.
  const newline = last.indexOf('\n');
  if (newline >= 0 && newline < last.length - 1) last = last.slice(newline + 1);
  const keptLast = Buffer.byteLength(last);
  return `${first}\n[… truncated: ${total} bytes sent, the first ${PING_HEAD_BYTES} and the last ${keptLast} kept]\n${last}`;
}

/** How a ping's body is compressed, from its Content-Encoding. */
export type PingBodyEncoding = 'identity' | 'gzip' | 'deflate';

/**
 * A ping body's `Content-Encoding`, checked: none (or `identity`), `gzip`
 * (`x-gzip`) or `deflate`, one of them, any case. A compressed body is
 * inflated before it is cut (the limits count what it holds, so a small bomb
 * cannot stand in for gigabytes); kept as sent, its bytes were the log and
 * their "last line" the error. `br` is refused (415) though the API's JSON
 * bodies take it: its decoder keeps a window of up to 16 MB, filled as the
 * body inflates (up to the 10 MB a ping may hold) and kept while the body
 * is held open, about 10 MB per request for 1 MB sent, where gzip and
 * deflate keep 32 KB (the API's bodies stop at 256 KB inflated). Anything
 * else is refused, naming it (415).
 */
export function pingBodyEncoding(header: string | undefined): { ok: true; encoding: PingBodyEncoding } | { ok: false; problem: string } {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return { ok: true, encoding: 'identity' };
  if (value === 'gzip' || value === 'x-gzip') return { ok: true, encoding: 'gzip' };
  if (value === 'deflate') return { ok: true, encoding: value };
  if (value === 'br') return { ok: false, problem: 'content-encoding: "br" is not taken for pings: its decoder holds up to 16 MB per request while the body comes (use gzip, deflate, or none)' };
  return { ok: false, problem: `content-encoding: ${JSON.stringify(value.slice(0, 40))} is not supported (use gzip, deflate, or none)` };
}
