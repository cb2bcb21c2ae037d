import { describe, expect, it } from 'vitest';
import { attemptsAllowed, hasAnotherAttempt, retriesAllowed } from '../../src/domain/retry-budget.js';

describe('retry budget of a tick', () => {
  it.each([
    // retries, launcher, attempts, retries granted
    [0, true, 1, 0],
    [2, true, 3, 2],
    [3, true, 4, 3],
    [0, false, 1, 0],
    [3, false, 1, 0],
  ])('policy retries %i, launcher %s: %i attempts, %i retries', (retries, launcher, attempts, granted) => {
    expect(attemptsAllowed(retries, launcher)).toBe(attempts);
    expect(retriesAllowed(retries, launcher)).toBe(granted);
  });

  it.each([
    // attempt that failed, retries, launcher, another?
    [1, 2, true, true],
    [2, 2, true, true],
    [3, 2, true, false],
    [1, 0, true, false],
    [1, 3, false, false],
    [4, 3, true, false],
  ])('attempt %i failed with %i retries (launcher %s): another attempt is %s', (attempt, retries, launcher, another) => {
    expect(hasAnotherAttempt(attempt, retries, launcher)).toBe(another);
  });
});
