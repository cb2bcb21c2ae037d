import type { Transaction } from 'kysely';
import { isConnectionError } from '../db/connection-errors.js';
import type { Database } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { POLL_BATCH } from '../domain/poll-batch.js';
import { metrics } from '../metrics.js';
import type { Run } from '../db/schema.js';
import { recordAlertEvents } from '../ledger/alert-events.js';
import { finishRunIn, notifyRunsFinished, RUNS_FINISHED_CHANNEL, type FinishResult, type RunOutcome } from '../ledger/runs.js';
import { afterBatch, processClaimed, type BatchOutcome } from './poller.js';

/**
 * Evaluates the workflow's finished, unprocessed runs in the report's
 * transaction (see `reportedTransaction`); `runId` is the one just written,
 * without its NOTIFY (sent here only if the run is left to the pollers).
 */
export type EvaluateNow = (workflowId: number, runId: number) => Promise<void>;

/**
 * A report's transaction (the ingest API, a ping) with the end it records
 * evaluated inside it (issue 18): the body calls `evaluate` once it has
 * written a finished run, and the poller's own claim and evaluation run
 * there, restricted to that workflow (`processClaimed` with `workflowId`).
 * A failure becomes an alert and its outbox rows in the same commit as the
 * report, without a second transaction or a hop through the poller: the
 * better part of the time between a reported failure and its notification.
 *
 * Nothing about ordering changes. The claim locks the workflow (and its
 * upstreams) `skip locked` exactly as a poller's does, and takes the
 * workflow's unprocessed runs in id order, older ones first: while another
 * replica's poller holds the workflow (or an upstream of it), the claim takes
 * nothing and the run is left to the pollers, woken as before. After commit
 * this replica's sender is woken and the retries decided are launched.
 *
 * The report is never lost to its evaluation: when the evaluation throws
 * (a bug, a deadlock), the transaction is taken again without it, the run is
 * recorded unprocessed and the poller deals with it (and marks it processed
 * if it keeps failing). A lost connection fails the report as before.
 */
export async function reportedTransaction<R>(deps: Deps, now: Date, body: (trx: Transaction<Database>, evaluate: EvaluateNow) => Promise<R>): Promise<R> {
  const inFlight = evaluating.get(deps.db) ?? 0;
  if (inFlight >= INLINE_EVALUATIONS) return inReportTransaction(deps, now, body, false);
  evaluating.set(deps.db, inFlight + 1);
  try {
    return await inReportTransaction(deps, now, body, true);
  } finally {
    evaluating.set(deps.db, (evaluating.get(deps.db) ?? 1) - 1);
  }
}

/**
 * How many reports one pool evaluates in their own transactions at once. A
 * burst beyond it (a storm, clients resending after a database blip) is left
 * to the pollers, whose batches evaluate a hundred runs in the statements one
 * report's evaluation costs: measured under the chaos suite's database
 * faults, evaluating every resent report on its own kept the replicas busy
 * long enough to hold notifications back seconds longer.
 */
export const INLINE_EVALUATIONS = 2;
const evaluating = new WeakMap<object, number>();

async function inReportTransaction<R>(deps: Deps, now: Date, body: (trx: Transaction<Database>, evaluate: EvaluateNow) => Promise<R>, evaluateHere: boolean): Promise<R> {
  let outcome: BatchOutcome | undefined;
  let asked = false;
  let failed = false;
  const attempt = (inline: boolean) =>
    deps.db.transaction().execute((trx) => {
      outcome = undefined;
      asked = false;
      failed = false;
      return body(trx, async (workflowId, runId) => {
        asked = true;
        if (inline) {
          try {
            outcome = await processClaimed(trx, deps, now, POLL_BATCH.max, { workflowId });
          } catch (error) {
            failed = true;
            throw error;
          }
        }
        // Left to the pollers: every replica's is woken, as by any finished run.
        if (!outcome?.claimed.includes(runId)) await notifyRunsFinished(trx, runId);
      });
    });
  let result: R;
  let evaluationFailed = false;
  try {
    result = await attempt(evaluateHere);
  } catch (error) {
    if (!failed || isConnectionError(error)) throw error;
    evaluationFailed = true;
    deps.logger.warn({ err: error }, 'a reported run could not be evaluated with its report; it is recorded for the poller');
    result = await attempt(false);
  }
  if (outcome) await afterBatch(deps, outcome);
  // Not taken here (another replica holds the workflow, or the evaluation failed): this replica's poller looks now.
  if (asked && !outcome?.claimed.length) deps.wake?.(RUNS_FINISHED_CHANNEL);
  if (asked) metrics.reportEvaluations.inc({ result: outcome?.claimed.length ? 'with_report' : evaluationFailed ? 'failed' : 'left_to_pollers' });
  return result;
}

/** Ends a reported `running` run (`finishRunIn`) and evaluates it in the same transaction. */
export function finishRunEvaluated(deps: Deps, runId: number, outcome: RunOutcome): Promise<FinishResult> {
  const now = deps.clock.now();
  return reportedTransaction(deps, now, async (trx, evaluate) => {
    const result = await finishRunIn(trx, runId, outcome, now, { notify: false });
    if (result.kind === 'finished') await evaluate(result.run.workflowId, result.run.id);
    if (result.kind === 'ended_late') await tellLateEnd(trx, deps, result, now);
    return result;
  });
}

/**
 * A timed-out run's late end is news to an open alert of its workflow (the
 * person deciding whether to run it again learns it finished after all);
 * with none open it stays a note on the run. The verdict does not change.
 */
async function tellLateEnd(trx: Transaction<Database>, deps: Deps, { run, end }: { run: Run; end: { status: string; error: string | null } }, now: Date): Promise<void> {
  const open = await trx.selectFrom('alerts').selectAll().where('workflowId', '=', run.workflowId).where('status', '=', 'open').forUpdate().executeTakeFirst();
  if (!open) return;
  const tenant = await trx.selectFrom('workflows').innerJoin('tenants', 'tenants.id', 'workflows.tenantId').select('tenants.channel').where('workflows.id', '=', run.workflowId).executeTakeFirstOrThrow();
  const lateSeconds = run.deadlineAt ? Math.max(0, Math.round((now.getTime() - run.deadlineAt.getTime()) / 1000)) : null;
  const data = { runId: run.id, status: 'timed_out', late: { status: end.status, error: end.error, lateSeconds }, tick: run.tick?.toISOString() ?? null };
  await recordAlertEvents(trx, [{ alert: open, tenant, kind: 'run_finished', data, now, config: deps.config }]);
}
