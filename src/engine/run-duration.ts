import { sql, type Transaction } from 'kysely';
import type { Database, Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile, Severity } from '../domain/cadence.js';
import { escalateAtFor } from '../domain/evaluate.js';
import { maintenanceAt } from '../domain/maintenance.js';
import { observedTickWindow } from '../domain/observed-dst.js';
import { retriesAllowed } from '../domain/retry-budget.js';
import { completionDeadline, completionJudged, latestDueCompletion, runningLongAfter, runningLongVerdict, type NormalDuration } from '../domain/run-duration.js';
import { nextFireAfter } from '../domain/schedule.js';
import { recordAlertEvents } from '../ledger/alert-events.js';
import { loadHistoryFacts } from '../ledger/history-facts.js';
import { profileOf } from '../ledger/profiles.js';
import { loadNormalDurations } from '../ledger/run-durations.js';
import { openAlerts, openingPage } from './alert-openings.js';
import { loadMaintenanceRules } from './maintenance-rules.js';

/**
 * Runs that take too long (issue 16), told before their timeout:
 * - a run still going past its workflow's normal duration is "running long"
 *   (src/domain/run-duration.ts): a reply in the open alert's thread, or a
 *   warning alert that escalates at the run's timeout;
 * - a tick with no success by its `completeBy` deadline is
 *   "completion_missed": an alert at the policy's first severity (a daily
 *   job's is critical and pages), or a reply in the open thread.
 * Each is decided once across replicas: the running-long verdict is claimed
 * by a conditional update of `runs.long_noticed_at`, the deadline by
 * advancing `workflows.completion_checked_tick` under the workflow row's
 * lock, which is also what serialises it with the evaluator.
 */

type DurationDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'launchers'>;
type Reader = Pick<Deps, 'db'>['db'] | Transaction<Database>;

/** Running runs looked at per pass, oldest start first (the ones most likely to be long). */
const RUNS_PER_PASS = 200;
const WORKFLOWS_PER_PASS = 500;

export async function checkRunDurations(deps: DurationDeps): Promise<boolean> {
  const now = deps.clock.now();
  const long = await noticeLongRuns(deps, now);
  const missed = await checkCompletionDeadlines(deps, now);
  return long + missed > 0;
}

interface LongCandidate {
  run: Pick<Run, 'id' | 'workflowId' | 'tick' | 'startedAt' | 'deadlineAt'>;
  workflow: Workflow;
  afterSeconds: number;
  normal: NormalDuration | null;
}

/** Running runs not yet told about, each with the threshold it would be long at (only those whose threshold comes before their timeout). */
async function longCandidates(db: Reader, now: Date): Promise<LongCandidate[]> {
  const runs = await db
    .selectFrom('runs')
    .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['runs.id', 'runs.workflowId', 'runs.tick', 'runs.startedAt', 'runs.deadlineAt'])
    .where('runs.status', '=', 'running')
    .where('runs.longNoticedAt', 'is', null)
    .where('runs.startedAt', 'is not', null)
    .where('workflows.enabled', '=', true)
    .where('workflows.monitoring', '=', true)
    .where('workflows.paused', '=', false)
    .where('tenants.enabled', '=', true)
    .orderBy('runs.startedAt')
    .limit(RUNS_PER_PASS)
    .execute();
  if (runs.length === 0) return [];
  const ids = [...new Set(runs.map((r) => r.workflowId))];
  const workflows = new Map((await db.selectFrom('workflows').selectAll().where('id', 'in', ids).execute()).map((w) => [w.id, w]));
  const normals = await loadNormalDurations(db, ids);
  return runs.flatMap((run) => {
    const workflow = workflows.get(run.workflowId)!;
    const profile = profileOf(workflow, now);
    const normal = normals.get(run.workflowId) ?? null;
    const afterSeconds = runningLongAfter(normal, profile.runningLongAfterSeconds);
    // This run's own timeout: the one it was started with.
    const timeoutSeconds = run.deadlineAt ? (run.deadlineAt.getTime() - run.startedAt!.getTime()) / 1000 : profile.timeoutSeconds;
    return afterSeconds !== null && afterSeconds < timeoutSeconds ? [{ run, workflow, afterSeconds, normal }] : [];
  });
}

export async function noticeLongRuns(deps: DurationDeps, now: Date): Promise<number> {
  let told = 0;
  for (const c of await longCandidates(deps.db, now)) {
    const verdict = runningLongVerdict({ startedAt: c.run.startedAt!, now, timeoutSeconds: Infinity, normal: c.normal, overrideSeconds: c.afterSeconds });
    if (!verdict.long) continue;
    const claimed = await deps.db.transaction().execute(async (trx) => {
      // skip locked: a workflow someone holds (an operator's open transaction, a poller's batch) is told at a
      // later pass; waiting for it held every other workflow's notice back, and failed the pass at the statement timeout.
      const ctx = await lockContext(trx, c.workflow.id, now, true);
      if (!ctx) return false;
      // The claim: only a run still running and not yet told about changes, so replicas tell it once.
      const run = await trx
        .updateTable('runs')
        .set({ longNoticedAt: now })
        .where('id', '=', c.run.id)
        .where('status', '=', 'running')
        .where('longNoticedAt', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!ctx || !run) return false;
      // Inside a maintenance window the run is not held against the workflow: claimed, not told.
      const rules = await loadMaintenanceRules(trx, [ctx.workflow], now);
      if (maintenanceAt(rules.get(ctx.workflow.id) ?? [], now)) return false;
      const data = {
        runId: c.run.id,
        startedAt: c.run.startedAt!.toISOString(),
        runningSeconds: verdict.runningSeconds,
        afterSeconds: verdict.afterSeconds,
        normal: c.normal ? { medianSeconds: c.normal.medianSeconds, samples: c.normal.samples } : null,
        timeoutAt: c.run.deadlineAt?.toISOString() ?? null,
      };
      // A warning that becomes critical at the run's timeout, when the timeout would have told it anyway.
      await tellOrOpen(trx, deps, ctx, 'running_long', data, { severity: 'warning', escalateAt: c.run.deadlineAt, runId: c.run.id, tick: c.run.tick }, now);
      return true;
    });
    if (claimed) told++;
  }
  return told;
}

interface Context {
  workflow: Workflow;
  tenant: Tenant;
  profile: CadenceProfile;
}

async function lockContext(trx: Transaction<Database>, workflowId: number, now: Date, skipLocked = false): Promise<Context | undefined> {
  const query = trx.selectFrom('workflows').selectAll().where('id', '=', workflowId).forUpdate();
  const workflow = await (skipLocked ? query.skipLocked() : query).executeTakeFirst();
  if (!workflow) return undefined;
  const tenant = await trx.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { workflow, tenant, profile: profileOf(workflow, now) };
}

/** The workflows with a completion deadline that can be judged (the same filters as missed ticks). */
async function deadlineWorkflows(db: Reader): Promise<Workflow[]> {
  return db
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .selectAll('workflows')
    .where(sql<boolean>`workflows.policy ? 'completeBy'`)
    .where('workflows.enabled', '=', true)
    .where('workflows.monitoring', '=', true)
    .where('workflows.paused', '=', false)
    .where('tenants.enabled', '=', true)
    .orderBy('workflows.id')
    .limit(WORKFLOWS_PER_PASS)
    .execute();
}

/** Each workflow's newest tick whose deadline passed, judged once: the cursor moves under the row lock. */
export async function checkCompletionDeadlines(deps: DurationDeps, now: Date): Promise<number> {
  let told = 0;
  for (const candidate of await deadlineWorkflows(deps.db)) {
    const completeBy = profileOf(candidate, now).completeBy;
    const due = completeBy && latestDueCompletion(candidate, completeBy, now);
    if (!due || (candidate.completionCheckedTick && due.tick <= candidate.completionCheckedTick)) continue;
    const missed = await deps.db.transaction().execute(async (trx) => {
      const ctx = await lockContext(trx, candidate.id, now, true);
      if (!ctx || (ctx.workflow.completionCheckedTick && due.tick <= ctx.workflow.completionCheckedTick)) return false;
      await trx.updateTable('workflows').set({ completionCheckedTick: due.tick }).where('id', '=', candidate.id).execute();
      // A tick from before the workflow existed, or inside maintenance, is not held against it.
      if (due.tick < ctx.workflow.createdAt) return false;
      const rules = await loadMaintenanceRules(trx, [ctx.workflow], due.tick);
      if (maintenanceAt(rules.get(ctx.workflow.id) ?? [], due.tick)) return false;
      const success = await trx
        .selectFrom('runs')
        .select('id')
        .where('workflowId', '=', candidate.id)
        .where('status', '=', 'succeeded')
        .where((eb) => eb.or([eb('tick', '=', due.tick), eb.and([eb('finishedAt', '>=', due.tick), eb('finishedAt', '<=', due.deadline)])]))
        .limit(1)
        .executeTakeFirst();
      if (success) return false;
      const tickRun = await trx.selectFrom('runs').select(['id', 'status']).where('workflowId', '=', candidate.id).where('tick', '=', due.tick).where('originalRunId', 'is', null).executeTakeFirst();
      const mayNotRun = ctx.workflow.mode === 'observed' && observedTickWindow(ctx.workflow.cron, ctx.workflow.timezone, due.tick).mayNotRun !== null;
      if (!completionJudged(tickRun?.status, mayNotRun)) return false;
      const { profile, workflow } = ctx;
      const severity = profile.firstSeverity;
      const data = {
        tick: due.tick.toISOString(),
        deadline: due.deadline.toISOString(),
        completeBy: `${completeBy.time} ${completeBy.timeZone ?? workflow.timezone}`,
        runId: tickRun?.id ?? null,
        status: tickRun?.status ?? null,
        running: tickRun?.status === 'running' || tickRun?.status === 'pending_retry',
        ...(severity === 'critical' ? openingPage(ctx.tenant) : {}),
      };
      const escalateAt = escalateAtFor(now, severity, profile.escalationMultiplier, profile.cadenceSeconds, workflow);
      await tellOrOpen(trx, deps, ctx, 'completion_missed', data, { severity, escalateAt, runId: tickRun?.id ?? null, tick: due.tick }, now);
      return true;
    });
    if (missed) told++;
  }
  return told;
}

interface Opening {
  severity: Severity;
  escalateAt: Date | null;
  runId: number | null;
  tick: Date | null;
}

/**
 * The open alert's thread hears it; with none open, an alert opens whose
 * opening names the cause (`data.cause`), counting no failure: the run has
 * not failed (yet). Its later failure is recorded, its success resolves it.
 */
async function tellOrOpen(trx: Transaction<Database>, deps: DurationDeps, ctx: Context, kind: 'running_long' | 'completion_missed', data: Record<string, unknown>, opening: Opening, now: Date): Promise<void> {
  const { workflow, tenant, profile } = ctx;
  const open = await trx.selectFrom('alerts').selectAll().where('workflowId', '=', workflow.id).where('status', '=', 'open').forUpdate().executeTakeFirst();
  if (open) {
    await recordAlertEvents(trx, [{ alert: open, tenant, kind, data, now, config: deps.config }]);
    return;
  }
  const failure = { runId: opening.runId, error: null, errorGroup: null, stage: null, status: 'failed' as const, tick: opening.tick, logExcerpt: null, logUrl: null };
  const effect = { type: 'open' as const, severity: opening.severity, failures: 0, failure, escalateAt: opening.escalateAt };
  // What history already holds is known to the alert: a failure below the threshold is not news its thread is told
  // later, and the success before the cause does not resolve it.
  const history = (await loadHistoryFacts(trx, [workflow.id])).get(workflow.id)!;
  const known = { failureRunId: history.newestFailure?.runId ?? null, successRunId: history.newestSuccess?.runId ?? null };
  // The alert's shape is the evaluator's (openAlerts); it is inserted here, alone, under the workflow row's lock.
  const { id: _provisional, generation: _generation, ...built } = openAlerts(deps, [{ target: ctx, effect, lastRunId: null, cause: kind, known }], now)[0]!.alert;
  const alert = await trx
    .insertInto('alerts')
    .values({ ...built, policy: JSON.stringify(built.policy), generation: sql<number>`(select coalesce(max(generation), 0) + 1 from alerts where workflow_id = ${workflow.id})` })
    .returningAll()
    .executeTakeFirstOrThrow();
  const noLauncher = !deps.launchers(workflow);
  const { mention, ...cause } = data;
  await recordAlertEvents(trx, [
    {
      alert,
      tenant,
      kind: 'opened',
      now,
      config: deps.config,
      data: {
        severity: opening.severity,
        consecutiveFailures: 0,
        errorGroup: null,
        error: null,
        runId: opening.runId,
        missed: false,
        tick: opening.tick?.toISOString() ?? null,
        retries: retriesAllowed(profile.retries, !noLauncher),
        noLauncher,
        escalateAt: opening.escalateAt?.toISOString() ?? null,
        cause: { kind, ...cause },
        ...(mention ? { mention } : {}),
      },
    },
  ]);
}

/**
 * When the next duration verdict can fall due (the replay's virtual clock
 * stops there): a running run's threshold, or the next completion deadline.
 */
export async function nextDurationCheckAt(db: Reader, now: Date): Promise<Date | undefined> {
  const times: number[] = [];
  for (const c of await longCandidates(db, now)) times.push(c.run.startedAt!.getTime() + c.afterSeconds * 1000);
  for (const w of await deadlineWorkflows(db)) {
    const completeBy = profileOf(w, now).completeBy;
    if (!completeBy) continue;
    const from = w.completionCheckedTick ?? new Date(Math.max(w.createdAt.getTime(), now.getTime() - 86_400_000) - 1);
    times.push(completionDeadline(nextFireAfter(w.cron, w.timezone, from), completeBy, w).getTime());
  }
  return times.length ? new Date(Math.min(...times)) : undefined;
}
