/**
 * How many finished runs the poller claims in its next batch (issue 19).
 *
 * A batch is one transaction: when the database drops its connection, the
 * whole batch rolls back and its work is lost. Under repeated faults on a
 * starved CPU (terminations 4 s apart, a load average of 20), a full batch
 * takes longer than the gap between faults and never commits, so the batch
 * shrinks hard when dropped. It doubles back with each batch that commits,
 * whatever that batch took: measured under two busy loops, keeping a slow
 * batch small (5 runs that took 2 s) left the pollers too slow to drain the
 * backlog once the faults stopped (longest stall 50 s instead of 20-40 s):
 * the per-batch statements, not the runs, are most of a small batch's time.
 */
export interface PollBatchRule {
  max: number;
  min: number;
}

export const POLL_BATCH: PollBatchRule = {
  /** The largest batch. */
  max: 100,
  /** The smallest: below it the per-batch statements (claim, evaluation, storm claims, commit) dominate. */
  min: 10,
};

export type BatchOutcome = { kind: 'committed' } | { kind: 'dropped' };

export function nextPollBatch(batch: number, outcome: BatchOutcome, rule: PollBatchRule = POLL_BATCH): number {
  return outcome.kind === 'dropped' ? Math.max(rule.min, Math.floor(batch / 4)) : Math.min(rule.max, batch * 2);
}
