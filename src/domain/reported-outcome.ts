import { compactDuration } from './durations.js';
import { exitStatusText } from './exit-status.js';
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
 * - a run the bot failed as timed out: the job's own end, arriving late, is
 *   its late end (`late_end`): kept on the run as a note, the timeout
 *   standing (core idea 8: the verdict is the tick's), told in an open
 *   alert's thread. A repeat of it is the same report.
 *
 * "What was reported" is the attempt's own status, before anything the bot
 * decided about it: a retry rewriting the tick's verdict keeps the first
 * attempt in `attemptStatus`, and the output checks (`minRows`' "empty
 * output", `minDurationSeconds`' "too fast") turn a reported success into a
 * failure, which the same success sent again must not conflict with.
 */
export type RepeatedReport = 'same' | 'finish' | 'conflict' | 'late_end';

/** The error a run reported from outside gets when no end came by its deadline (the freshness loop writes it). */
export const TIMED_OUT = 'timed out';

export function repeatedReport(run: ReportedRun, reported: 'running' | 'succeeded' | 'failed'): RepeatedReport {
  if (run.status === 'running') return reported === 'running' ? 'same' : 'finish';
  if (reported === 'running') return 'same';
  if (run.attemptStatus === 'failed' && run.attemptError === TIMED_OUT) return hasLateEnd(run.outcomeNote ?? null) ? 'same' : 'late_end';
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
  outcomeNote?: string | null;
}

const LATE_END = 'the job ended ';

/**
 * The note a late end leaves on its timed-out run: how it ended, how long
 * after the deadline, and that the timeout stands. Appended to a note the run
 * already has.
 */
export function lateEndNote(previous: string | null, end: { status: 'succeeded' | 'failed'; error: string | null }, deadlineAt: Date | null, now: Date): string {
  const late = deadlineAt ? ` ${compactDuration(Math.max(0, now.getTime() - deadlineAt.getTime()))} after its timeout` : ' after its timeout';
  const how = end.status === 'succeeded' ? 'succeeded' : `failed${end.error ? ` (${end.error.slice(0, 200)})` : ''}`;
  const note = `${LATE_END}${how}${late}, at ${now.toISOString()}; the timeout stands`;
  return previous ? `${previous}; ${note}` : note;
}

/** Whether a run's note already holds its late end (a repeat of it changes nothing). */
export function hasLateEnd(note: string | null): boolean {
  return !!note && note.includes(LATE_END);
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

/**
 * The error stored for an end reported over the API. Its `status` is the
 * verdict and an `exitCode` a detail kept as given, whatever it is: programs
 * disagree on what their codes mean (robocopy succeeds with 1 to 7, grep
 * finding nothing exits 1, a job can exit 0 and fail a check of its own, a
 * Windows crash is a negative 32-bit code), and the reporter knows. A
 * failure that says no more than its exit code reads as a command's
 * (`exited with code 3`, `killed by SIGKILL (exit code 137)`), so it
 * groups with the same end reported by a ping; with exit code 0 it says
 * that the reporter failed it.
 */
export function reportedEndError(status: 'succeeded' | 'failed', error: string | null | undefined, exitCode: number | null | undefined): string | null {
  if (error) return error;
  if (status === 'succeeded') return null;
  if (exitCode === null || exitCode === undefined) return 'failed (reported over the API)';
  return exitCode === 0 ? 'failed (reported over the API) with exit code 0' : exitStatusText(exitCode, null);
}
