import { expect, it } from 'vitest';
import { HOUSEKEEPING_DB_FAILURES_UNREADY, housekeepingHealth } from '../../src/domain/housekeeping-health.js';

const at = (s: number) => new Date(Date.UTC(2026, 2, 10, 2, 0, s));

it('a job that has not failed is ok', () => {
  expect(housekeepingHealth({ failures: 0, dbErrors: 0 }, [at(1)])).toEqual({ state: 'ok', blocksReadiness: false });
});

it('a job that keeps failing by its own fault is failing, shown, and never holds the replica unready', () => {
  expect(housekeepingHealth({ failures: 1, dbErrors: 0, lastErrorAt: at(5) }, [at(1)])).toEqual({ state: 'failing', blocksReadiness: false });
  expect(housekeepingHealth({ failures: 50, dbErrors: 0, lastErrorAt: at(5) }, [at(1)])).toEqual({ state: 'failing', blocksReadiness: false });
  // A streak that is not the database every time is the job's own trouble.
  expect(housekeepingHealth({ failures: 5, dbErrors: 4, lastErrorAt: at(5) }, [at(1)])).toEqual({ state: 'failing', blocksReadiness: false });
});

it('fewer database failures in a row than the limit do not make the replica unready', () => {
  const n = HOUSEKEEPING_DB_FAILURES_UNREADY - 1;
  expect(housekeepingHealth({ failures: n, dbErrors: n, lastErrorAt: at(5) }, [at(1)])).toEqual({ state: 'failing', blocksReadiness: false });
});

it('firings that keep failing because the database does hold the replica unready until every loop has done a tick since the last of them', () => {
  const n = HOUSEKEEPING_DB_FAILURES_UNREADY;
  const job = { failures: n, dbErrors: n, lastErrorAt: at(5) };
  expect(housekeepingHealth(job, [at(1), at(6)])).toEqual({ state: 'database failing', blocksReadiness: true });
  expect(housekeepingHealth(job, [undefined, at(6)])).toEqual({ state: 'database failing', blocksReadiness: true });
  expect(housekeepingHealth(job, [at(6), at(7)])).toEqual({ state: 'database failing', blocksReadiness: false });
  // No loops at all (an app run without them): nothing says the database is back.
  expect(housekeepingHealth(job, [])).toEqual({ state: 'database failing', blocksReadiness: true });
});
