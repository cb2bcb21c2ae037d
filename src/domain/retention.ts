import { MAX_ALERT_AFTER } from './cadence.js';
import { NORMAL_SAMPLES } from './run-duration.js';

/**
 * What run retention (src/ledger/retention.ts, docs/retention.md) keeps past
 * `RUN_RETENTION_DAYS` because a decision still reads it. Both are bounded per
 * workflow, so the ledger's size stays that of its retention window plus a
 * constant per workflow, however rare the workflow's ticks or however long it
 * has been failing.
 */

/**
 * The newest successful attempts with a duration, per workflow: what the
 * normal duration ("running long", issue 16) is learned from. All of them
 * (NORMAL_SAMPLES, not just MIN_SAMPLES): a weekly job keeps barely four
 * weeks of successes in 30 days and a monthly one one, so without these the
 * normal of a rare job was never learned, and that of any job would change
 * with the retention rather than with its runs.
 */
export const DURATION_SAMPLES_KEPT = NORMAL_SAMPLES;

/**
 * Of a streak no success has followed, a tick failure older than the
 * retention stays while it is among the streak's newest this many (counted
 * as the evaluator counts: in a maintenance window they do not); one inside
 * the retention stays anyway, so the streak keeps max(this, its failures in
 * the retention window). The evaluator
 * counts back to the last success (core idea 4), and all it decides with that
 * count is whether it reached `alertAfter` (at most MAX_ALERT_AFTER); failures
 * counted towards escalation are those since the alert opened, which an open
 * alert keeps whole. Twice the largest alertAfter (the largest failures-to-
 * escalate too) leaves every threshold reached with room to spare, while a
 * workflow failing every minute for months keeps these, not a row a minute.
 * An older failure beyond them only makes the count (in an alert that opens
 * on the streak later, after a resolve by hand, say) smaller than the truth,
 * still far above any threshold.
 */
export const STREAK_FAILURES_KEPT = 2 * MAX_ALERT_AFTER;

const DAY_MS = 86_400_000;

/**
 * A workflow removed (from the workflows file, or DELETE over the API: both
 * only disable it, `enabled = false`; a paused one is still enabled and is
 * never removed) is deleted by retention once it was removed before this
 * instant and nothing kept points at it: no alert left (open, or resolved
 * within the same `ALERT_RETENTION_DAYS`), no run left (run retention has
 * taken them by its own rules), and no enabled workflow naming it in
 * `dependsOn`. Its removal resolved its open alert, so by the time it has
 * been removed this long its alerts have gone too: one setting, not a new
 * one, and the workflow row never outlives what it was kept for. When it was
 * removed is its `removed_at`, written by the removal alone: a workflow still
 * declared with `enabled: false` (in the file, or a PUT) is not removed and
 * is never deleted (re-enabled after a winter off, it keeps its id, history
 * and ping key), and one declared again is no longer removed.
 */
export function removedWorkflowCutoff(now: Date, alertRetentionDays: number): Date {
  return new Date(now.getTime() - alertRetentionDays * DAY_MS);
}
