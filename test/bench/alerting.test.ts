import { expect, it } from 'vitest';
import { alertingPeer } from '../../bench/alerting.js';
import { alertmanagerBinary } from '../../bench/lib/alertmanager.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('failure-to-webhook vs Alertmanager: latencies for both, duplicates and losses under a node kill, or "skipped: not installed"', async () => {
  const figures = await alertingPeer(smokeContext());
  const ours = ['ours p50', 'ours p99', 'ours under a node kill: duplicated', 'ours under a node kill: lost'];
  const peer = alertmanagerBinary()
    ? ['Alertmanager tightest p50', 'Alertmanager tightest p99', 'Alertmanager cluster under a node kill: duplicated', 'Alertmanager cluster under a node kill: lost']
    : ['Alertmanager: skipped: not installed', 'Alertmanager cluster: skipped: not installed'];
  expectWellFormed(figures, 'failure-to-webhook vs Alertmanager', [...ours, ...peer]);
  // Every reported failure reached the receiver (a latency is finite only for a delivered alert).
  expect(figures.find((f) => f.figure === 'ours p99')!.parameters.samples).toBe(10);
}, 240_000);
