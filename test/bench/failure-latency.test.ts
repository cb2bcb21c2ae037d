import { expect, it } from 'vitest';
import { failureLatency } from '../../bench/failure-latency.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('failure-to-Slack latency: every failed run reaches the Slack stand-in as a root message; p50, p99, max', async () => {
  const figures = await failureLatency(smokeContext());
  expectWellFormed(figures, 'failure-to-Slack latency', ['p50', 'p99', 'max']);
  // Percentiles of nothing are no measurement: every one of the smoke's 20 failures was timed, from its commit to its root post.
  const p = figures[0]!.parameters as { alerts: number; measured: number };
  expect(p.alerts).toBe(20);
  expect(p.measured).toBe(p.alerts);
  const value = (name: string) => figures.find((f) => f.figure === name)!.value;
  expect(value('p50')).toBeGreaterThanOrEqual(0);
  expect(value('p50')).toBeLessThanOrEqual(value('p99'));
  expect(value('p99')).toBeLessThanOrEqual(value('max'));
  expect(value('max')).toBeGreaterThan(0);
}, 180_000);
