import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED } from '../../src/domain/redact.js';

describe('redacting text cut from something longer', () => {
  const redact = createRedactor(['hunter2-secret-value', 'other-secret-0000']);
  it.each([
    // [text, cut, expected]
    ['ret-value and more', { start: true }, `${REDACTED} and more`],
    ['ret-value and more', {}, 'ret-value and more'],
    ['lue and more', { start: true }, `${REDACTED} and more`],
    // Shorter than MIN_CUT_FRAGMENT: nothing to tell apart from ordinary text.
    ['ue and more', { start: true }, 'ue and more'],
    ['said hunter2-sec', { end: true }, `said ${REDACTED}`],
    ['said hunter2-sec', { start: true }, 'said hunter2-sec'],
    ['said other-secret-000', { end: true }, `said ${REDACTED}`],
    // Whole secrets are found as always; the edges only add the halves.
    ['t-value hunter2-secret-value hunte', { start: true, end: true }, `${REDACTED} ${REDACTED} ${REDACTED}`],
    ['token sbt_AAAAAAAAAAAA', { end: true }, `token ${REDACTED}`],
    // A callback token (sbr_<run>_<hmac>) cut at the end, whatever is left of it.
    [`cb sbr_812_${'ab'.repeat(20)}`, { end: true }, `cb ${REDACTED}`],
    ['cb sbr_81', { end: true }, `cb ${REDACTED}`],
    ['nothing secret here', { start: true, end: true }, 'nothing secret here'],
  ] as const)('%j cut %j → %j', (text, cut, expected) => {
    expect(redact(text, cut)).toBe(expected);
  });
});

describe('tokens found by their shape', () => {
  const redact = createRedactor([]);
  const callback = `sbr_812_${'0123456789abcdef'.repeat(4)}`;
  it('removes a callback launch token echoed in a run output, whole, wherever it stands', () => {
    expect(redact(`{"callback":{"url":"https://bot/api/v1/runs/812","token":"${callback}"}}`)).toBe(`{"callback":{"url":"https://bot/api/v1/runs/812","token":"${REDACTED}"}}`);
    expect(redact(`Authorization: Bearer ${callback}\n`)).toBe(`Authorization: Bearer ${REDACTED}\n`);
  });
  it('leaves text that only looks like one alone', () => {
    expect(redact('sbr_812_not-hex and sbr_ alone')).toBe('sbr_812_not-hex and sbr_ alone');
    expect(redact(`sbr_812_${'0'.repeat(63)}`)).toBe(`sbr_812_${'0'.repeat(63)}`);
  });
});
