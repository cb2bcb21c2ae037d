import { expect, it } from 'vitest';
import { nextPollBatch, POLL_BATCH } from '../../src/domain/poll-batch.js';

it('a dropped batch shrinks to a quarter, never below the minimum', () => {
  expect(nextPollBatch(100, { kind: 'dropped' })).toBe(25);
  expect(nextPollBatch(25, { kind: 'dropped' })).toBe(POLL_BATCH.min);
  expect(nextPollBatch(POLL_BATCH.min, { kind: 'dropped' })).toBe(POLL_BATCH.min);
});

it('a batch that committed doubles, up to the maximum', () => {
  expect(nextPollBatch(POLL_BATCH.min, { kind: 'committed' })).toBe(2 * POLL_BATCH.min);
  expect(nextPollBatch(80, { kind: 'committed' })).toBe(POLL_BATCH.max);
  expect(nextPollBatch(POLL_BATCH.max, { kind: 'committed' })).toBe(POLL_BATCH.max);
});
