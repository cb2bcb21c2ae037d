import { expect, it } from 'vitest';
import { evaluationThroughput } from '../../bench/evaluation-throughput.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('evaluation throughput: runs/s per replica count, the peer and the ratio, from real processes', async () => {
  const figures = await evaluationThroughput(smokeContext());
  expectWellFormed(figures, 'evaluation throughput', ['runs/s, 1 replica', 'runs/s, 2 replicas', 'graphile-worker no-op jobs/s (defaults)', 'ratio: ours (2 replicas) / peer']);
  // The ledger's bursts really opened and resolved alerts (the work measured is the real work).
  const outcomes = figures[0]!.parameters.outcomesPerRepeat as Record<string, number>;
  expect(outcomes.opened).toBeGreaterThan(0);
  expect(outcomes.resolved).toBe(outcomes.opened);
}, 180_000);
