/**
 * How many finished runs the poller claims in its next batch (issue 19).
 *
 * A batch is one transaction: when the database drops its connection, the
 * whole batch rolls back and its work is lost. Under repeated faults on a
 * starved CPU (terminations 4 s apart, a load average of 20), a batch that
 * takes longer than the gap between faults never commits, and the backlog,
 * and the oldest run's wait, only grow. So the batch shrinks hard when
 * dropped, and grows back only while batches commit quickly: a batch that
 * took seconds is not doubled into one that outlasts the next fault.
 */
export interface PollBatchRule {
  max: number;
  min: number;
  targetMs: number;
}

export const POLL_BATCH: PollBatchRule = {
  /** The largest batch, taken while batches commit quickly. */
  max: 100,
  /** The smallest: below it the per-batch statements (claim, evaluation, commit) dominate. */
  min: 5,
  /** A batch that committed within this grows (doubles); a slower one keeps its size. */
  targetMs: 2_000,
};

export type BatchOutcome = { kind: 'committed'; ms: number } | { kind: 'dropped' };

export function nextPollBatch(batch: number, outcome: BatchOutcome, rule: PollBatchRule = POLL_BATCH): number {
  if (outcome.kind === 'dropped') return Math.max(rule.min, Math.floor(batch / 4));
  // A slow commit is not shrunk: without faults that would only cut throughput on a busy machine.
  return outcome.ms <= rule.targetMs ? Math.min(rule.max, batch * 2) : batch;
}
