import { expect, it } from 'vitest';
import { evaluationThroughput } from '../../bench/evaluation-throughput.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('evaluation throughput: runs/s per replica count, the floor, both queue peers at their best and the ratios, from real processes', async () => {
  const figures = await evaluationThroughput(smokeContext());
  expectWellFormed(figures, 'evaluation throughput', [
    'runs/s, 1 replica',
    'runs/s, 2 replicas',
    'floor runs/s, 1 connection',
    'floor runs/s, 2 connections',
    'graphile-worker no-op jobs/s (best of sweep)',
    'pg-boss no-op jobs/s (best of sweep)',
    'ratio: ours (2 replicas) / best graphile-worker',
    'ratio: ours (2 replicas) / best pg-boss',
    'ratio: ours (2 replicas) / floor (2 connections)',
  ]);
  // The ledger's bursts really opened and resolved alerts (the work measured is the real work).
  const outcomes = figures[0]!.parameters.outcomesPerRepeat as Record<string, number>;
  expect(outcomes.opened).toBeGreaterThan(0);
  expect(outcomes.resolved).toBe(outcomes.opened);
  // The floor wrote as many rows per run as the engine did, and each peer says which settings won.
  const floor = figures.find((f) => f.figure === 'floor runs/s, 2 connections')!.parameters;
  expect((floor.rowsPerRun as number[])[0]).toBeCloseTo((outcomes.alerts! + outcomes.events! + outcomes.notifications!) / 400, 2);
  for (const peer of ['graphile-worker', 'pg-boss']) {
    const best = figures.find((f) => f.figure === `${peer} no-op jobs/s (best of sweep)`)!.parameters.best as { settings: Record<string, unknown> };
    expect(best.settings.processes).toBeGreaterThanOrEqual(1);
  }
}, 240_000);
