import { tooFastError } from './run-duration.js';

/**
 * A report that names a run the ledger already has (the same `externalId`,
 * or `POST /runs/{id}` again): what it means. Reporters resend (a lost
 * answer, `curl --retry`, an at-least-once queue) and their messages can
 * arrive out of order (the end before the start), so a repeat that says
 * nothing new is acknowledged, never refused.
 *
 * - a run still running: a start again is the same run, an end finishes it;
 * - a finished run: a start is the same run (it arrived after its end); an
 *   end is the same report when it says what was reported, else a conflict.
 *
 * "What was reported" is the attempt's own status, before anything the bot
 * decided about it: a retry rewriting the tick's verdict keeps the first
 * attempt in `attemptStatus`, and the output checks (`minRows`' "empty
 * output", `minDurationSeconds`' "too fast") turn a reported success into a
 * failure, which the same success sent again must not conflict with.
 */
export type RepeatedReport = 'same' | 'finish' | 'conflict';

export function repeatedReport(run: ReportedRun, reported: 'running' | 'succeeded' | 'failed'): RepeatedReport {
  if (run.status === 'running') return reported === 'running' ? 'same' : 'finish';
  if (reported === 'running') return 'same';
  return reportedStatusOf(run) === reported ? 'same' : 'conflict';
}

/**
 * A ping start without a `rid` whose tick already has its run: is it that
 * run's start sent again? Yes when that run is itself a rid-less start,
 * reported from outside (no lease: the bot launched nothing) and still
 * running, of an observed workflow. `curl --retry` resends a start whose
 * answer was lost; taken as a second run outside any tick, the job's one end
 * closed that second run (an end pairs with the newest start) and left the
 * tick's own run to time out hours later, a failure of a job that had
 * succeeded. Healthchecks too reads starts without a rid as one run.
 */
export function isRepeatedStart(mode: string, tickRun: { status: string; trigger: string; externalId: string | null; leaseOwner: string | null }): boolean {
  return mode === 'observed' && tickRun.status === 'running' && tickRun.trigger === 'schedule' && tickRun.externalId === null && tickRun.leaseOwner === null;
}

export interface ReportedRun {
  status: string;
  attemptStatus: string | null;
  attemptError: string | null;
}

/** The status a finished run was reported (or launched) with: its attempt's, a success the output checks failed read back as a success. */
export function reportedStatusOf(run: ReportedRun): string {
  const status = run.attemptStatus ?? run.status;
  return status === 'failed' && isOutputCheckError(run.attemptError) ? 'succeeded' : status;
}

const EMPTY_OUTPUT = 'empty output: ';
const TOO_FAST_PREFIX = tooFastError(0, 0).split(':')[0]! + ': ';

/** The error of a success with fewer rows than `minRows` (core idea 8). */
export function emptyOutputError(rows: number | null, minRows: number): string {
  return `${EMPTY_OUTPUT}${rows ?? 0} rows, expected at least ${minRows}`;
}

/** Whether an attempt's error is one the output checks gave a reported success. */
export function isOutputCheckError(error: string | null): boolean {
  return !!error && (error.startsWith(EMPTY_OUTPUT) || error.startsWith(TOO_FAST_PREFIX));
}
