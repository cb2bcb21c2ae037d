import { expect, it } from 'vitest';
import { nextPollBatch, POLL_BATCH } from '../../src/domain/poll-batch.js';

it('a dropped batch shrinks to a quarter, never below the minimum', () => {
  expect(nextPollBatch(100, { kind: 'dropped' })).toBe(25);
  expect(nextPollBatch(25, { kind: 'dropped' })).toBe(6);
  expect(nextPollBatch(6, { kind: 'dropped' })).toBe(POLL_BATCH.min);
  expect(nextPollBatch(POLL_BATCH.min, { kind: 'dropped' })).toBe(POLL_BATCH.min);
});

it('a batch that committed quickly doubles up to the maximum; a slow one keeps its size', () => {
  expect(nextPollBatch(5, { kind: 'committed', ms: 0 })).toBe(10);
  expect(nextPollBatch(10, { kind: 'committed', ms: POLL_BATCH.targetMs })).toBe(20);
  expect(nextPollBatch(80, { kind: 'committed', ms: 10 })).toBe(POLL_BATCH.max);
  // On a starved CPU a small batch can take seconds: doubled, it would outlast the gap between faults.
  expect(nextPollBatch(10, { kind: 'committed', ms: POLL_BATCH.targetMs + 1 })).toBe(10);
  // Slow without faults is not shrunk: that would only cut throughput on a busy machine.
  expect(nextPollBatch(100, { kind: 'committed', ms: 30_000 })).toBe(100);
});
