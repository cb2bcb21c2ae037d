import { describe, expect, it } from 'vitest';
import { countTransitions, failingIntermittently, intermittentRuleOf, intermittentThreshold, isFlapping, type TickOutcome } from '../../src/domain/flapping.js';

/** Newest first: 'F' a failure, 'S' a success. */
const outcomes = (s: string): TickOutcome[] => [...s].map((c) => (c === 'F' ? 'failure' : 'success'));

describe('flapping', () => {
  it('counts the changes among the newest ten outcomes only', () => {
    expect(countTransitions(outcomes('FSFS'))).toBe(3);
    expect(countTransitions(outcomes('FFFFFFFFFFSFSFS'))).toBe(0);
    expect(isFlapping(3)).toBe(true);
    expect(isFlapping(2)).toBe(false);
  });
});

/** The rule that opens an alert for a job failing half its runs that never fails `alertAfter` in a row. */
describe('failingIntermittently', () => {
  it('needs half the window, or alertAfter when a policy asks for more', () => {
    expect(intermittentThreshold(1)).toBe(5);
    expect(intermittentThreshold(3)).toBe(5);
    expect(intermittentThreshold(7)).toBe(7);
  });

  it.each([
    { name: 'alternating, ten outcomes, newest a failure: 5 of 10', s: 'FSFSFSFSFS', alertAfter: 3, expected: { failures: 5, window: 10, transitions: 9 } },
    { name: 'alternating, only nine outcomes so far: 5 of 9', s: 'FSFSFSFSF', alertAfter: 3, expected: { failures: 5, window: 9, transitions: 8 } },
    { name: 'older outcomes beyond the window do not count', s: 'FSFSFSFSSSFFFFF', alertAfter: 3, expected: null },
    { name: 'alternating, newest a success: not now (the next failure tells)', s: 'SFSFSFSFSF', alertAfter: 3, expected: null },
    { name: 'alternating but only four failures in the window: not yet', s: 'FSFSFSFSSS', alertAfter: 3, expected: null },
    { name: 'mostly failing, but not flapping (two changes): the count in a row decides', s: 'FFFFFFSFFF', alertAfter: 12, expected: null },
    { name: 'a policy asking for 7 failures keeps control: 5 of 10 opens nothing', s: 'FSFSFSFSFS', alertAfter: 7, expected: null },
    { name: 'a policy asking for 7: 7 of 10 flapping opens', s: 'FFSFFSFFSF', alertAfter: 7, expected: { failures: 7, window: 10, transitions: 6 } },
    { name: 'no outcomes: nothing', s: '', alertAfter: 3, expected: null },
  ])('$name', ({ s, alertAfter, expected }) => {
    expect(failingIntermittently(outcomes(s), alertAfter)).toEqual(expected);
  });
});

/** What `/scheduler status` says of the rule: said exactly where some history could open an alert by it before `alertAfter` in a row does. */
describe('intermittentRuleOf', () => {
  it('names the threshold of the last ten runs, or nothing where the rule cannot act', () => {
    expect(intermittentRuleOf(1)).toBeNull();
    expect(intermittentRuleOf(3)).toEqual({ failures: 5, window: 10 });
    expect(intermittentRuleOf(8)).toEqual({ failures: 8, window: 10 });
    expect(intermittentRuleOf(9)).toBeNull();
  });

  it('agrees with the rule itself over every ten-run history', () => {
    const histories = Array.from({ length: 1 << 10 }, (_, bits) => outcomes([...Array(10)].map((_, i) => ((bits >> i) & 1 ? 'F' : 'S')).join('')));
    for (let alertAfter = 1; alertAfter <= 12; alertAfter++) {
      const inARow = (h: TickOutcome[]) => (h.findIndex((o) => o === 'success') + 11) % 11 || 10;
      const opensEarly = histories.some((h) => inARow(h) < alertAfter && failingIntermittently(h, alertAfter) !== null);
      expect({ alertAfter, said: intermittentRuleOf(alertAfter) !== null }).toEqual({ alertAfter, said: opensEarly });
    }
  });
});
