import { it } from 'vitest';
import { failureLatency } from '../../bench/failure-latency.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('failure-to-Slack latency: every failed run reaches the Slack stand-in as a root message; p50, p99, max', async () => {
  expectWellFormed(await failureLatency(smokeContext()), 'failure-to-Slack latency', ['p50', 'p99', 'max']);
}, 120_000);
