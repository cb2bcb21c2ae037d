/**
 * How long a launcher keeps trying to record the end of a run it supervised
 * while the database does not answer. Pure.
 *
 * The outcome exists nowhere else (the process is gone), and giving up early
 * turns a success into "worker lost" and a second run of a job that already
 * succeeded. So it is retried for the run's lease period: the replica keeps
 * holding the lease meanwhile, and past it, with renewals failing too, the
 * lease has run out and another replica may already have failed the run.
 */

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/**
 * The wait before the next try after `failures` failed ones (1, 2, …), the
 * first of them `elapsedMs` ago; undefined once `windowMs` has passed.
 * Doubling from 250 ms to at most 5 s, and never past the window's end (the
 * last try falls on it).
 */
export function reportRetryDelay(failures: number, elapsedMs: number, windowMs: number): number | undefined {
  if (elapsedMs >= windowMs) return undefined;
  const backOff = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(failures - 1, 20));
  return Math.min(backOff, windowMs - elapsedMs);
}
