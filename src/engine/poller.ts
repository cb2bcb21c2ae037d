import type { Transaction } from 'kysely';
import { databaseRefusalOf, isConnectionError, isDatabaseAway, isDatabaseFault } from '../db/connection-errors.js';
import { refusalScope } from '../domain/database-refusal.js';
import type { Database, Run } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import { errorGroupOf } from '../domain/fingerprint.js';
import { maintenanceAt, type MaintenanceRule } from '../domain/maintenance.js';
import { nextPollBatch, POLL_BATCH } from '../domain/poll-batch.js';
import { isTooFast, tooFastError } from '../domain/run-duration.js';
import { isWatched } from '../domain/watched.js';
import { lateReportOf } from '../domain/tick-match.js';
import { emptyOutputError } from '../domain/reported-outcome.js';
import { NOTIFICATIONS_CHANNEL } from '../ledger/alert-events.js';
import { launchRun } from '../ledger/launch-run.js';
import { evaluateWorkflows, type EvaluationTarget } from './evaluator.js';
import { workflowRules } from './maintenance-rules.js';
import { claimBatch, type ClaimedWorkflow } from './batch-claim.js';
import { profileOf } from '../ledger/profiles.js';
import { handleFailedOriginal, handleFinishedAttempt, retriesFailure, type Launch } from './retry.js';
import { checkedRunsUpdate } from '../ledger/checked-runs.js';
import { awaitUpstreamTurn } from './upstream-blocks.js';
import { UnconfirmedLaunches } from './unconfirmed-launches.js';

/**
 * The poller (DESIGN.md, core idea 1): the run ledger is the queue. One tick
 * claims a batch of finished, unprocessed runs and routes each one: failed
 * attempts with budget to the retry engine, tick verdicts and manual runs to
 * the evaluator. Claim, routing and evaluation share one transaction, so
 * another replica never sees a claimed run half-routed (a failure about to
 * become `pending_retry` is never counted as confirmed). If the batch throws
 * for another reason than a lost connection, its runs are taken again one at
 * a time, and a run that still throws is marked processed with the error
 * logged: a fault is never re-processed forever.
 */

/**
 * The poller loop's tick, with a batch sized by `nextPollBatch`: shrunk when
 * the database drops it, grown back as batches commit. When the connection
 * was lost mid-batch (the database had answered: a termination, a reset),
 * the smaller batch is taken again at once, on a new connection, rather than
 * after the runner's back-off: under faults a few seconds apart that wait
 * was a good part of the gap (issue 19). A second drop in a row, or a
 * database that does not answer, fails the tick and the runner backs off.
 * The batches go through the poller's own pool when there is one (`deps.pollerDb`).
 */
export function adaptivePoller(deps: Deps): () => Promise<boolean> {
  let batch = POLL_BATCH.max;
  const attempt = async () => {
    try {
      // Read at each tick: `deps.wake` is set once the loops are built.
      const found = await pollFinishedRuns(deps.pollerDb ? { ...deps, db: deps.pollerDb } : deps, batch);
      batch = nextPollBatch(batch, { kind: 'committed' });
      return found;
    } catch (error) {
      if (isConnectionError(error)) batch = nextPollBatch(batch, { kind: 'dropped' });
      throw error;
    }
  };
  return async () => {
    try {
      return await attempt();
    } catch (error) {
      if (!isConnectionError(error) || isDatabaseAway(error)) throw error;
      deps.logger.info({ error: (error as Error).message, batch }, 'poller batch dropped by the database; taking a smaller one at once');
      return attempt();
    }
  };
}

export async function pollFinishedRuns(deps: Deps, batch = POLL_BATCH.max): Promise<boolean> {
  return (await pollFinishedRunsDetailed(deps, batch)).length > 0;
}

/** One poller tick; returns the ids of the runs this call claimed (the replica test checks no run is taken twice). */
export async function pollFinishedRunsDetailed(deps: Deps, batch = POLL_BATCH.max): Promise<number[]> {
  const now = deps.clock.now();
  // Retries of a batch whose COMMIT went unanswered, found committed: launched now, not failed as "worker lost" later.
  const late = await unconfirmedRetries.confirmed(deps);
  if (late.length > 0) await afterBatch(deps, { claimed: [], launches: late, told: false });
  let outcome: BatchOutcome;
  try {
    outcome = await unconfirmedRetries.commit(deps.replicaId, (decided) =>
      deps.db.transaction().execute(async (trx) => {
        const processed = await processClaimed(trx, deps, now, batch);
        decided(processed.launches);
        return processed;
      }),
    );
    // Nothing to take: maybe a dependency group another replica holds; its turn is waited for (upstream-blocks.ts).
    if (outcome.claimed.length === 0) outcome = await takeUpstreamTurn(deps, now, batch, outcome);
  } catch (error) {
    // A lost connection is nobody's fault: the batch rolled back whole and the runner takes it again after a
    // short back-off. Going one run at a time instead (a transaction each, for up to a whole batch of runs
    // and whatever arrived meanwhile) kept every replica's poller in one tick for minutes under repeated
    // faults while the backlog grew (issue 19). One at a time is for a run that breaks its batch.
    // A database refusing every write (read-only, disk full) refuses each run alike: the runner backs off.
    const refusal = databaseRefusalOf(error);
    if (isConnectionError(error) || (refusal && refusalScope(refusal) === 'database')) throw error;
    deps.logger.warn({ err: error, ...(refusal ? { refusal } : {}) }, 'poller batch failed; processing its runs one at a time');
    return pollOneByOne(deps, now, batch);
  }
  await afterBatch(deps, outcome);
  return outcome.claimed;
}

/**
 * The claim came back empty: waits for a dependency group's turn, briefly
 * (UPSTREAM_TURN_LOCK_TIMEOUT_MS). A group held longer (an operator's open
 * transaction on one of its workflows) is left for a later tick: its runs
 * wait, nobody else's do.
 */
async function takeUpstreamTurn(deps: Deps, now: Date, batch: number, empty: BatchOutcome): Promise<BatchOutcome> {
  try {
    return await deps.db.transaction().execute(async (trx) => ((await awaitUpstreamTurn(trx, batch)) > 0 ? processClaimed(trx, deps, now, batch) : empty));
  } catch (error) {
    if (databaseRefusalOf(error) !== 'lock_timeout') throw error;
    deps.logger.debug({ error: (error as Error).message }, 'a dependency group is held by another session; its runs wait for a later tick');
    return empty;
  }
}

/** This process's retry launches whose commit went unanswered (src/engine/unconfirmed-launches.ts). */
const unconfirmedRetries = new UnconfirmedLaunches<Launch>();

export interface BatchOutcome {
  claimed: number[];
  launches: Launch[];
  /** Events were recorded: this replica's sender is woken at once after commit. */
  told: boolean;
}

/** Claims with one statement (see `claimBatch`): marked processed at claim time, returned in id order. */
export async function claimFinishedRuns(trx: Transaction<Database>, now: Date, limit: number): Promise<Run[]> {
  return (await claimBatch(trx, now, limit)).runs;
}

type RunContext = ClaimedWorkflow & { profile: CadenceProfile };

/**
 * Claims a batch (of one workflow's runs only, with `workflowId`) and routes
 * and evaluates it in the caller's transaction; `afterBatch` once that has committed.
 */
export async function processClaimed(trx: Transaction<Database>, deps: Deps, now: Date, limit: number, o: { onClaim?: (ids: number[]) => void; workflowId?: number } = {}): Promise<BatchOutcome> {
  const { runs, workflows } = await claimBatch(trx, now, limit, o.workflowId);
  o.onClaim?.(runs.map((r) => r.id));
  if (runs.length === 0) return { claimed: [], launches: [], told: false };
  const contexts = new Map<number, RunContext>(workflows.map((c) => [c.workflow.id, { ...c, profile: profileOf(c.workflow, now) }]));
  const watched = (r: Run) => {
    const { workflow, tenant } = contexts.get(r.workflowId)!;
    return isWatched(workflow, tenant);
  };
  // A workflow nobody watches any more (disabled, deleted, its tenant gone, or not monitored): its runs are
  // recorded and marked processed, never held against it. A retry attempt still in flight when it stopped being
  // watched writes its tick's verdict, with no further attempt.
  for (const run of runs.filter((r) => !watched(r) && r.originalRunId !== null)) {
    await handleFinishedAttempt(trx, { ...deps, launchers: () => undefined }, { run, ...contexts.get(run.workflowId)! }, now);
  }
  const { runs: checked, changed } = applyOutputChecks(runs.filter(watched), contexts);
  await markMaintenanceTicks(trx, checked, contexts);
  // The checked rows are written with the evaluator's first statement, unless the retry engine reads or writes them first.
  let unwritten = changed;
  const written = async () => {
    if (unwritten.length > 0) await checkedRunsUpdate(unwritten).execute(trx);
    unwritten = [];
  };

  const launches: Launch[] = [];
  const targets = new Map<number, EvaluationTarget>();
  const target = (workflowId: number) => {
    let t = targets.get(workflowId);
    if (!t) {
      const { workflow, tenant, profile, hasUpstreams, hasDownstreams } = contexts.get(workflowId)!;
      targets.set(workflowId, (t = { workflow, tenant, profile, hasUpstreams, hasDownstreams, finishedManualRuns: [] }));
    }
    return t;
  };

  for (const run of checked) {
    const ctx = contexts.get(run.workflowId)!;
    if (run.originalRunId !== null) {
      await written();
      const result = await handleFinishedAttempt(trx, deps, { run, ...ctx }, now);
      if (result.kind === 'retrying') launches.push(result.launch);
      else target(run.workflowId);
    } else if (run.tick !== null && run.status === 'failed') {
      if (retriesFailure(deps, { run, ...ctx })) await written();
      const result = await handleFailedOriginal(trx, deps, { run, ...ctx }, now);
      if (result.kind === 'retrying') launches.push(result.launch);
      else target(run.workflowId);
    } else {
      const t = target(run.workflowId);
      if (run.tick === null && run.trigger === 'manual') t.finishedManualRuns.push(run);
      if (run.tick !== null && ctx.workflow.mode === 'observed' && lateReportOf(run, ctx.profile.graceSeconds)) (t.lateTicks ??= []).push(run);
      if (run.tick === null && run.trigger === 'external' && run.outcomeNote) (t.notedOutsideTicks ??= []).push(run);
    }
  }
  const told = await evaluateWorkflows(trx, deps, [...targets.values()], now, unwritten);
  return { claimed: runs.map((r) => r.id), launches, told };
}

/**
 * Silence is data (core idea 8): a success with fewer rows than minRows is a
 * failure, "empty output"; one faster than minDurationSeconds, "too fast". The row itself says so, so history and the
 * evaluator agree. Failures get their error group here, once. The runs come
 * back in claim order, with the rows that change: written by one statement
 * (`checkedRunsUpdate`), the evaluator's first unless a retry reads them before.
 */
function applyOutputChecks(runs: Run[], contexts: Map<number, { profile: CadenceProfile }>): { runs: Run[]; changed: Run[] } {
  const changed: Run[] = [];
  const out = runs.map((run) => {
    const { minRows, minDurationSeconds } = contexts.get(run.workflowId)!.profile;
    let next: Run | undefined;
    if (run.status === 'succeeded' && minRows !== null && (run.rows ?? 0) < minRows) {
      const error = emptyOutputError(run.rows, minRows);
      next = { ...run, status: 'failed', attemptStatus: 'failed', attemptError: error, error, errorGroup: errorGroupOf({ status: 'failed', error, emptyOutput: true }) };
    } else if (run.status === 'succeeded' && isTooFast(run.durationSeconds, minDurationSeconds)) {
      // Too fast to be real (issue 16): a failure like empty output, so retries, counting and alerting apply as to any failure.
      const error = tooFastError(run.durationSeconds!, minDurationSeconds!);
      next = { ...run, status: 'failed', attemptStatus: 'failed', attemptError: error, error, errorGroup: errorGroupOf({ status: 'failed', error, tooFast: true }) };
    } else if (run.errorGroup === null) {
      const errorGroup = errorGroupOf(run);
      if (errorGroup) next = { ...run, errorGroup };
    }
    if (next) changed.push(next);
    return next ?? run;
  });
  return { runs: out, changed };
}

/**
 * A tick that fell inside a maintenance window is recorded as usual but not
 * held against the workflow: its original row (the one that carries the
 * tick's verdict and that history reads) is marked, and history facts skip
 * its failure. A retry attempt marks its original, since the verdict lands there.
 * The windows came with the claim: a statement only when a tick is marked.
 */
async function markMaintenanceTicks(trx: Transaction<Database>, runs: Run[], contexts: Map<number, RunContext>): Promise<void> {
  const rules = new Map<number, MaintenanceRule[]>();
  const rulesOf = ({ workflow, tenant, oneOffWindows }: RunContext) => {
    if (!rules.has(workflow.id)) rules.set(workflow.id, workflowRules(workflow, tenant, oneOffWindows));
    return rules.get(workflow.id)!;
  };
  const ids = runs.filter((r) => r.tick !== null && maintenanceAt(rulesOf(contexts.get(r.workflowId)!), r.tick) !== null).map((r) => r.originalRunId ?? r.id);
  if (ids.length > 0) await trx.updateTable('runs').set({ inMaintenance: true }).where('id', 'in', [...new Set(ids)]).execute();
}

async function pollOneByOne(deps: Deps, now: Date, limit: number): Promise<number[]> {
  const found: number[] = [];
  for (let i = 0; i < limit; i++) {
    let runId: number | undefined;
    let outcome: BatchOutcome;
    try {
      outcome = await deps.db.transaction().execute(async (trx) => {
        return processClaimed(trx, deps, now, 1, { onClaim: (ids) => (runId = ids[0]) });
      });
    } catch (error) {
      // A lost connection, or a database refusing (read-only, disk full, a lock waited for past the statement
      // timeout), is not the run's fault: it stays unprocessed for the next poll, and this pass ends.
      if (runId === undefined || isDatabaseFault(error)) throw error;
      deps.logger.error({ err: error, runId }, 'run could not be processed; marked processed so it is not retried forever');
      await deps.db.updateTable('runs').set({ processedAt: now }).where('id', '=', runId).where('processedAt', 'is', null).execute();
      found.push(runId);
      continue;
    }
    if (outcome.claimed.length === 0) break;
    found.push(...outcome.claimed);
    await afterBatch(deps, outcome);
  }
  return found;
}

/** After a batch's commit: this replica's sender is woken when events were recorded, and the retries it decided are launched. */
export async function afterBatch(deps: Deps, outcome: BatchOutcome): Promise<void> {
  if (outcome.told) deps.wake?.(NOTIFICATIONS_CHANNEL);
  for (const l of outcome.launches) {
    try {
      await launchRun(deps, l.run, l.workflow, l.tenant, l.timeoutSeconds);
    } catch (error) {
      // launchRun fails the run itself when the launcher refuses; this is the database failing under it.
      deps.logger.error({ err: error, runId: l.run.id, workflowId: l.workflow.id }, 'retry launch failed');
    }
  }
}
