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
    ['nothing secret here', { start: true, end: true }, 'nothing secret here'],
  ] as const)('%j cut %j → %j', (text, cut, expected) => {
    expect(redact(text, cut)).toBe(expected);
  });
});
