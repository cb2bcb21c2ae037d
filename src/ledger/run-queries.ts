import { cursorPage } from './cursor-page.js';
import type { Db } from '../db/connect.js';
import type { Run, RunStatus } from '../db/schema.js';
import { loadNormalDurations } from './run-durations.js';
import type { Scope } from './alert-queries.js';

export interface RunFilter {
  workflow?: string;
  status?: RunStatus;
  trigger?: Run['trigger'];
  /** Runs recorded at or after this instant. */
  from?: Date;
  /** Runs recorded before this instant. */
  to?: Date;
  /** Only runs with an id below this one (the previous page's `next`). */
  before?: number;
  limit: number;
}

export interface RunListItem {
  id: number;
  tenant: string;
  workflow: string;
  tick: Date | null;
  trigger: Run['trigger'];
  attempt: number;
  status: RunStatus;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationSeconds: number | null;
  error: string | null;
}

/**
 * Runs newest first, keyset-paginated on the id (a cursor that stays right
 * while new runs arrive and old ones are retained away), within the caller's
 * tenant. Index-bounded: the primary key walks back from `before`, the
 * workflow filter uses `runs_history`'s leading column.
 */
export async function listRuns(db: Db, scope: Scope, f: RunFilter): Promise<{ runs: RunListItem[]; next: number | null }> {
  let q = db
    .selectFrom('runs as r')
    .innerJoin('workflows as w', 'w.id', 'r.workflowId')
    .select(['r.id', 'w.tenantId as tenant', 'w.name as workflow', 'r.tick', 'r.trigger', 'r.attempt', 'r.status', 'r.startedAt', 'r.finishedAt', 'r.durationSeconds', 'r.error'])
    .orderBy('r.id', 'desc')
    .limit(f.limit + 1);
  if (scope.tenantId) q = q.where('w.tenantId', '=', scope.tenantId);
  if (f.workflow) q = q.where('w.name', '=', f.workflow);
  if (f.status) q = q.where('r.status', '=', f.status);
  if (f.trigger) q = q.where('r.trigger', '=', f.trigger);
  if (f.from) q = q.where('r.createdAt', '>=', f.from);
  if (f.to) q = q.where('r.createdAt', '<', f.to);
  if (f.before) q = q.where('r.id', '<', f.before);
  const { page, next } = cursorPage(await q.execute(), f.limit);
  return { runs: page, next };
}

/** One run with what a person debugging it needs, and the other attempts of its tick; undefined when outside the scope. */
export async function getRunDetail(db: Db, scope: Scope, id: number) {
  let q = db
    .selectFrom('runs as r')
    .innerJoin('workflows as w', 'w.id', 'r.workflowId')
    .selectAll('r')
    .select(['w.tenantId as tenant', 'w.name as workflow'])
    .where('r.id', '=', id);
  if (scope.tenantId) q = q.where('w.tenantId', '=', scope.tenantId);
  const run = await q.executeTakeFirst();
  if (!run) return undefined;
  const originalId = run.originalRunId ?? run.id;
  const normal = (await loadNormalDurations(db, [run.workflowId])).get(run.workflowId) ?? null;
  const attempts = await db
    .selectFrom('runs')
    .select(['id', 'attempt', 'trigger', 'status', 'attemptStatus', 'attemptError', 'startedAt', 'finishedAt', 'durationSeconds', 'exitCode'])
    .where((eb) => eb.or([eb('id', '=', originalId), eb('originalRunId', '=', originalId)]))
    .orderBy('attempt')
    .execute();
  return {
    id: run.id,
    tenant: run.tenant,
    workflow: run.workflow,
    tick: run.tick,
    trigger: run.trigger,
    attempt: run.attempt,
    originalRunId: run.originalRunId,
    status: run.status,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationSeconds: run.durationSeconds,
    /** The workflow's normal duration (median of its newest successes), to read this one against; null before enough history. */
    normalDuration: normal,
    runningLongSince: run.longNoticedAt,
    error: run.error,
    errorGroup: run.errorGroup,
    stage: run.stage,
    rows: run.rows === null ? null : Number(run.rows),
    exitCode: run.exitCode,
    logExcerpt: run.logExcerpt,
    logUrl: run.logUrl,
    outcomeNote: run.outcomeNote,
    requestedBy: run.requestedBy,
    attempts,
  };
}
