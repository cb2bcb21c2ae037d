import type { Run } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { repeatedReport, reportedEndError } from '../domain/reported-outcome.js';
import { latestFireAtOrBefore } from '../domain/schedule.js';
import { isFutureTick } from '../domain/tick-match.js';
import { profileOf } from '../ledger/profiles.js';
import type { Scope } from '../ledger/alert-queries.js';
import { insertReportedFinished, insertReportedRunning, lockReportedWorkflow, matchTick, tickRow, type TickMatch } from '../ledger/reported-runs.js';
import type { FinishResult, RunOutcome } from '../ledger/runs.js';
import { finishRunEvaluated, reportedTransaction } from '../engine/evaluate-now.js';

/** The ingest API's use cases: a job run elsewhere reports its start and end. */

export interface RunReport {
  tenant: string;
  workflow: string;
  status: 'running' | 'succeeded' | 'failed';
  tick?: Date;
  error?: string;
  stage?: string;
  rows?: number;
  logUrl?: string;
  log?: string;
  externalId?: string;
  /** A finish-only report's duration; unknown (null) without it. */
  durationSeconds?: number;
}

export type ReportResult =
  | { kind: 'created'; run: Run }
  /** The externalId was seen before and this report says nothing new (or finished that run). */
  | { kind: 'existing'; run: Run }
  | { kind: 'not_found' }
  | { kind: 'not_a_fire_time'; tick: Date; previous: Date | undefined }
  /** A tick still to come: reporting it now would stop the scheduler (or the freshness detector) from ever seeing it. */
  | { kind: 'future_tick'; tick: Date }
  | { kind: 'tick_taken'; run: Run }
  | { kind: 'conflict'; run: Run }
  /** An end of a run the bot had failed as timed out: kept on it as a note (`outcomeNote`), the timeout standing. */
  | { kind: 'ended_late'; run: Run };

const outcomeOf = (r: RunReport): RunOutcome => ({
  status: r.status as RunOutcome['status'],
  error: r.status === 'running' ? (r.error ?? null) : reportedEndError(r.status, r.error, undefined),
  stage: r.stage ?? null,
  rows: r.rows ?? null,
  logUrl: r.logUrl ?? null,
  logExcerpt: r.log ?? null,
});

/**
 * Records a reported run. The same externalId twice is one run: a repeat
 * with nothing new is acknowledged, a terminal status for a run still
 * running finishes it, and a different end for a finished one is a conflict.
 */
export async function reportRun(deps: Deps, report: RunReport, scope: Scope): Promise<ReportResult> {
  if (scope.tenantId !== undefined && scope.tenantId !== report.tenant) return { kind: 'not_found' };
  const now = deps.clock.now();
  // A reported end is evaluated in this transaction (src/engine/evaluate-now.ts): its alert commits with it.
  const decided = await reportedTransaction(deps, now, async (trx, evaluate): Promise<ReportResult | { kind: 'finish'; run: Run }> => {
    const workflow = await lockReportedWorkflow(trx, { tenantId: report.tenant, name: report.workflow });
    if (!workflow) return { kind: 'not_found' };

    if (report.externalId !== undefined) {
      const seen = await trx.selectFrom('runs').selectAll().where('workflowId', '=', workflow.id).where('externalId', '=', report.externalId).executeTakeFirst();
      if (seen) {
        const repeat = repeatedReport(seen, report.status);
        return repeat === 'finish' || repeat === 'late_end' ? { kind: 'finish', run: seen } : repeat === 'same' ? { kind: 'existing', run: seen } : { kind: 'conflict', run: seen };
      }
    }

    let match: TickMatch;
    if (report.tick) {
      const previous = latestFireAtOrBefore(workflow.cron, workflow.timezone, report.tick);
      if (!previous || previous.getTime() !== report.tick.getTime()) return { kind: 'not_a_fire_time', tick: report.tick, previous };
      if (isFutureTick(report.tick, now, workflow, profileOf(workflow, now).cadenceSeconds)) return { kind: 'future_tick', tick: report.tick };
      // Whether the tick is free is the insert's to say (it writes nothing when the tick has its row): one round trip fewer.
      match = { tick: report.tick, trigger: 'schedule' };
    } else {
      // An end that says how long it took started that long ago: its tick is the start's, not the end's.
      const startedAt = report.durationSeconds === undefined ? now : new Date(now.getTime() - report.durationSeconds * 1000);
      match = await matchTick(trx, workflow, startedAt, { endOnly: report.status !== 'running' });
    }
    const start = { workflow, match, externalId: report.externalId ?? null };
    const finish = (s: typeof start) => insertReportedFinished(trx, s, outcomeOf(report), now, { durationSeconds: report.durationSeconds });
    let run = report.status === 'running' ? await insertReportedRunning(trx, start, now) : await finish(start);
    if (!run) {
      const taken = report.tick && (await tickRow(trx, workflow.id, report.tick));
      // The late end of a tick recorded missed takes its row over, as an end without a tick does (matchTick).
      if (taken && taken.status === 'missed' && report.status !== 'running') run = await finish({ ...start, match: { ...match, missed: taken } });
      else if (taken) return { kind: 'tick_taken', run: taken };
    }
    if (!run) {
      throw new Error(`run for ${report.tenant}/${report.workflow} at ${match.tick?.toISOString()} was not inserted although its tick was free`);
    }
    if (run.status !== 'running') await evaluate(workflow.id, run.id);
    return { kind: 'created', run };
  });
  if (decided.kind !== 'finish') return decided;
  const finished = await finishRunEvaluated(deps, decided.run.id, outcomeOf(report));
  if (finished.kind === 'finished') return { kind: 'existing', run: finished.run };
  if (finished.kind === 'ended_late') return { kind: 'ended_late', run: finished.run };
  if (finished.kind === 'already_finished') return finished.same ? { kind: 'existing', run: finished.run } : { kind: 'conflict', run: finished.run };
  return { kind: 'not_found' };
}

/** Finishes a running run by id, within what the caller may see. */
export async function finishReportedRun(
  deps: Deps,
  runId: number,
  outcome: RunOutcome,
  visible: { tenantId?: string; runId?: number },
): Promise<FinishResult> {
  const run = await deps.db
    .selectFrom('runs')
    .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
    .select(['runs.id', 'workflows.tenantId'])
    .where('runs.id', '=', runId)
    .executeTakeFirst();
  if (!run) return { kind: 'not_found' };
  if (visible.tenantId !== undefined && run.tenantId !== visible.tenantId) return { kind: 'not_found' };
  if (visible.runId !== undefined && run.id !== visible.runId) return { kind: 'not_found' };
  return finishRunEvaluated(deps, runId, outcome);
}
