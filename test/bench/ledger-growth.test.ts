import { expect, it } from 'vitest';
import { ledgerGrowth } from '../../bench/ledger-growth.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('ledger growth: the four costs on an empty and a full ledger, and a retention pass that removed rows', async () => {
  const figures = await ledgerGrowth(smokeContext());
  expectWellFormed(figures, 'ledger growth', [
    'evaluation throughput, empty ledger',
    'evaluation throughput, full ledger',
    'ratio full / empty: evaluation throughput',
    'ratio full / empty: tick lateness p99',
    'ratio full / empty: escalation pass',
    'ratio full / empty: /metrics scrape',
    'retention: first pass (10 days aged out)',
    'retention: database size before',
  ]);
  const value = (name: string) => figures.find((f) => f.figure === name)!;
  // Something was measured: the full ledger held history, runs were evaluated, the pass removed rows.
  expect(value('evaluation throughput, full ledger').parameters.historyRuns).toBe(100 * 100);
  expect(value('evaluation throughput, empty ledger').value).toBeGreaterThan(0);
  expect(value('retention: rows removed by the first pass').value).toBeGreaterThan(0);
  expect(value('retention: runs in a month at 200 workflows').value).toBe(200 * 40);
}, 300_000);
