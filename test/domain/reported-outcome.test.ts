import { describe, expect, it } from 'vitest';
import { emptyOutputError, hasLateEnd, lateEndNote, repeatedReport, isRepeatedStart, reportedEndError, reportedStatusOf, TIMED_OUT } from '../../src/domain/reported-outcome.js';
import { tooFastError } from '../../src/domain/run-duration.js';

const run = (status: string, attemptStatus: string | null = null, attemptError: string | null = null, outcomeNote: string | null = null) => ({ status, attemptStatus, attemptError, outcomeNote });

describe('a report naming a run the ledger already has', () => {
  it.each([
    // the run, what the report says, what it means
    [run('running'), 'running', 'same'],
    [run('running'), 'failed', 'finish'],
    [run('running'), 'succeeded', 'finish'],
    [run('succeeded', 'succeeded'), 'succeeded', 'same'],
    [run('succeeded', 'succeeded'), 'failed', 'conflict'],
    [run('failed', 'failed', 'OOMKilled'), 'failed', 'same'],
    [run('failed', 'failed', 'OOMKilled'), 'succeeded', 'conflict'],
    // a start that arrives after its end: the same run
    [run('failed', 'failed', 'OOMKilled'), 'running', 'same'],
    [run('succeeded', 'succeeded'), 'running', 'same'],
    // a retry rewrote the tick's verdict: the first attempt is what was reported
    [run('succeeded', 'failed', 'connection reset'), 'failed', 'same'],
    [run('succeeded', 'failed', 'connection reset'), 'succeeded', 'conflict'],
    // the output checks failed a reported success: the same success again is the same report
    [run('failed', 'failed', emptyOutputError(0, 10)), 'succeeded', 'same'],
    [run('failed', 'failed', emptyOutputError(3, 10)), 'failed', 'conflict'],
    [run('failed', 'failed', tooFastError(2, 60)), 'succeeded', 'same'],
    [run('missed', 'missed', 'missed: no run started by …'), 'succeeded', 'conflict'],
    // the bot failed it as timed out: the job's own end, late, is kept; once
    [run('failed', 'failed', TIMED_OUT), 'succeeded', 'late_end'],
    [run('failed', 'failed', TIMED_OUT), 'failed', 'late_end'],
    [run('failed', 'failed', TIMED_OUT), 'running', 'same'],
    [run('failed', 'failed', TIMED_OUT, lateEndNote(null, { status: 'succeeded', error: null }, null, new Date(0))), 'failed', 'same'],
    // a launcher's own timeout is its end, not one still to come
    [run('failed', 'failed', 'timed out after 60s (process group terminated)'), 'succeeded', 'conflict'],
  ] as const)('%o, reported %s: %s', (existing, reported, meaning) => {
    expect(repeatedReport(existing, reported)).toBe(meaning);
  });

  it('a late end\'s note: how it ended, how long after the deadline, the timeout standing; after a note already there', () => {
    const deadline = new Date('2026-03-10T03:00:00Z');
    const now = new Date('2026-03-10T03:14:30Z');
    expect(lateEndNote(null, { status: 'succeeded', error: null }, deadline, now)).toBe('the job ended succeeded 14m 30s after its timeout, at 2026-03-10T03:14:30.000Z; the timeout stands');
    const failed = lateEndNote('started 20m after its tick', { status: 'failed', error: 'OOMKilled' }, deadline, now);
    expect(failed).toBe('started 20m after its tick; the job ended failed (OOMKilled) 14m 30s after its timeout, at 2026-03-10T03:14:30.000Z; the timeout stands');
    expect(hasLateEnd(failed)).toBe(true);
    expect(hasLateEnd('started 20m after its tick')).toBe(false);
  });

  it('reads back the status a run was reported with', () => {
    expect(reportedStatusOf(run('failed', 'failed', emptyOutputError(null, 1)))).toBe('succeeded');
    expect(reportedStatusOf(run('failed', 'failed', 'exited with code 1: empty output: nothing'))).toBe('failed');
    expect(reportedStatusOf(run('skipped'))).toBe('skipped');
  });
});

describe('isRepeatedStart: a ping start without a rid, its tick already taken', () => {
  const tickRun = (over: Partial<{ status: string; trigger: string; externalId: string | null; leaseOwner: string | null }> = {}) => ({
    status: 'running',
    trigger: 'schedule',
    externalId: null,
    leaseOwner: null,
    ...over,
  });
  it.each([
    // mode, the tick's run, is the start that run's start again?
    ['observed', tickRun(), true],
    // the tick's run already ended: a start now is a rerun (a run outside the tick)
    ['observed', tickRun({ status: 'succeeded' }), false],
    ['observed', tickRun({ status: 'missed' }), false],
    // a start with a rid, or one reported over the API with an externalId, is a run of its own
    ['observed', tickRun({ externalId: 'ping:a' }), false],
    ['observed', tickRun({ externalId: 'airflow:42' }), false],
    // the bot launched it (a lease), or the workflow is the bot's: a ping never stands for that run
    ['observed', tickRun({ leaseOwner: 'replica-a' }), false],
    ['managed', tickRun(), false],
  ] as const)('%s, %o: %s', (mode, run, same) => {
    expect(isRepeatedStart(mode, run)).toBe(same);
  });
});

describe('reportedEndError: the error of an end reported over the API (its status decides; an exit code is its detail)', () => {
  it.each([
    ['failed', 'boom', 3, 'boom'],
    ['failed', undefined, 3, 'exited with code 3'],
    ['failed', undefined, 137, 'killed by SIGKILL (exit code 137)'],
    ['failed', undefined, -1073741819, 'exited with code -1073741819'],
    ['failed', undefined, 0, 'failed (reported over the API) with exit code 0'],
    ['failed', undefined, undefined, 'failed (reported over the API)'],
    ['succeeded', undefined, 1, null],
    ['succeeded', 'warnings: 3', 0, 'warnings: 3'],
  ] as const)('%s, error %s, exit code %s: %s', (status, error, exitCode, expected) => {
    expect(reportedEndError(status, error, exitCode)).toBe(expected);
  });
});
