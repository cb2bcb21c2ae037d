import { describe, expect, it } from 'vitest';
import { PING_BODY_HARD_LIMIT, PING_BODY_LIMIT, PING_HEAD_BYTES, pingBodyEncoding, pingBodyTooLarge, pingExcerpt } from '../../src/domain/ping-body.js';

/** What the reader hands over: the first PING_BODY_LIMIT bytes and the last 4 KB. */
const excerptOf = (text: string) => {
  const bytes = Buffer.from(text);
  return pingExcerpt(bytes.subarray(0, PING_BODY_LIMIT), bytes.subarray(Math.max(0, bytes.length - 4096)), bytes.length);
};

describe('pingExcerpt', () => {
  it('keeps a body up to the limit whole', () => {
    const body = 'x'.repeat(PING_BODY_LIMIT - 1) + '\n';
    expect(excerptOf(body)).toBe(body);
  });

  it('a longer body: its start, the marker, then its end from a whole line on, the last line the job printed last', () => {
    const body = `${'row\n'.repeat(40_000)}half a line that the tail cut\nERROR: out of memory\n`;
    const excerpt = excerptOf(body);
    expect(excerpt.startsWith('row\n'.repeat(100))).toBe(true);
    expect(excerpt).toContain(`[… truncated: ${Buffer.byteLength(body)} bytes sent, the first ${PING_HEAD_BYTES} and the last `);
    expect(excerpt.endsWith('half a line that the tail cut\nERROR: out of memory\n')).toBe(true);
    expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(PING_BODY_LIMIT + 100);
  });

  it('never keeps half a character at either cut', () => {
    const body = 'é'.repeat(120_000); // two bytes each: both cuts can fall inside one
    const excerpt = excerptOf(`${body}x`);
    expect(excerpt).not.toContain('\uFFFD');
    const odd = excerptOf(`x${body}`);
    expect(odd).not.toContain('\uFFFD');
  });
});

describe('pingBodyEncoding', () => {
  it('takes none, identity, gzip (x-gzip) and deflate in any case; refuses br saying why, and names anything else', () => {
    expect(['', undefined, 'identity', ' GZIP ', 'x-gzip', 'Deflate'].map((h) => pingBodyEncoding(h))).toEqual(
      ['identity', 'identity', 'identity', 'gzip', 'gzip', 'deflate'].map((encoding) => ({ ok: true, encoding })),
    );
    expect(pingBodyEncoding('BR')).toEqual({ ok: false, problem: 'content-encoding: "br" is not taken for pings: its decoder holds up to 16 MB per request while the body comes (use gzip, deflate, or none)' });
    expect(pingBodyEncoding('gzip, br')).toEqual({ ok: false, problem: 'content-encoding: "gzip, br" is not supported (use gzip, deflate, or none)' });
    expect(pingBodyEncoding('zstd')).toMatchObject({ ok: false });
  });
});

describe('pingBodyTooLarge', () => {
  it('counts the bytes sent as well as those they inflate to: either past 10 MB is too large', () => {
    expect(pingBodyTooLarge(PING_BODY_HARD_LIMIT, PING_BODY_HARD_LIMIT)).toBe(false);
    expect(pingBodyTooLarge(1000, PING_BODY_HARD_LIMIT + 1)).toBe(true);
    // Compressed data that inflates to nothing (empty gzip members) is still counted as it arrives.
    expect(pingBodyTooLarge(PING_BODY_HARD_LIMIT + 1, 0)).toBe(true);
  });
});
