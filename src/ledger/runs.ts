import { sql, type OnConflictBuilder, type Transaction } from 'kysely';
import type { Database, Run, RunTrigger, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { lateEndNote, repeatedReport } from '../domain/reported-outcome.js';
import { redactSecrets } from '../secrets.js';

/** The ledger's two primitives: a run begins (a `running` row), and a run ends. */

export const RUNS_FINISHED_CHANNEL = 'scheduler_runs_finished';

/** How long a replica's hold on a running attempt lasts unless renewed. */
export const RUN_LEASE_MS = 60_000;

export interface NewRunningRun {
  workflow: Workflow;
  tick: Date | null;
  trigger: RunTrigger;
  attempt?: number;
  originalRunId?: number | null;
  requestedBy?: string | null;
  externalId?: string | null;
  timeoutSeconds: number;
  /** The replica that will launch it holds its lease; null for runs reported from outside. */
  leaseOwner: string | null;
  /** Why the run is what it is, when something says (a reported run outside every tick: `utcCrontabNote`). */
  outcomeNote?: string | null;
}

/** A run row as first written, before the database gives it an id and a creation time. */
export type RunRow = Omit<Run, 'id' | 'createdAt'>;

/**
 * A new `runs` row: what the row is (workflow, tick, trigger, status) plus
 * whatever its writer already knows; every column a later event fills in
 * (verdict, error, lease, processing) starts empty. Every writer of a run row
 * goes through here, so a new column gets its starting value in one place.
 */
export function newRunRow(row: Pick<RunRow, 'workflowId' | 'tick' | 'trigger' | 'status'> & Partial<RunRow>): RunRow {
  return {
    attempt: 1,
    originalRunId: null,
    attemptStatus: null,
    attemptError: null,
    startedAt: null,
    finishedAt: null,
    deadlineAt: null,
    error: null,
    errorGroup: null,
    stage: null,
    rows: null,
    exitCode: null,
    logExcerpt: null,
    logUrl: null,
    outcomeNote: null,
    requestedBy: null,
    externalId: null,
    processedAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    // Marked by the poller when the tick falls inside a maintenance window.
    inMaintenance: false,
    durationSeconds: null,
    longNoticedAt: null,
    ...row,
  };
}

/**
 * A tick has one original row: the unique index `runs_history` on (workflow,
 * tick) where original_run_id is null (migration 0016; it is also the index
 * every history read walks), inferred by the conflict target below.
 * Every insert of a run row names it here and does nothing on conflict, so a
 * second writer for the same tick (another replica's scheduler, a report, the
 * freshness detector) gets no row back and fires or records nothing. Retries
 * (original_run_id set) and manual runs (no tick) are outside the index.
 */
const onOriginalTick = (oc: OnConflictBuilder<Database, 'runs'>) =>
  oc.columns(['workflowId', 'tick']).where('originalRunId', 'is', null).where('tick', 'is not', null).doNothing();
const ON_ORIGINAL_TICK = sql`on conflict (workflow_id, tick) where original_run_id is null and tick is not null do nothing`;

/**
 * Inserts one run row (see `newRunRow`); undefined when its tick already has
 * its original row. With `notify`, the same statement sends a NOTIFY on that
 * channel with the new run's id (none when nothing was inserted).
 */
export async function insertRunRow(trx: Transaction<Database>, row: RunRow, options: { notify?: string } = {}): Promise<Run | undefined> {
  const insert = trx.insertInto('runs').values(row).onConflict(onOriginalTick).returningAll();
  if (!options.notify) return insert.executeTakeFirst();
  const found = await trx
    .with('inserted', () => insert)
    .selectFrom('inserted')
    .selectAll()
    .select(sql<unknown>`pg_notify(${options.notify}, inserted.id::text)`.as('notified'))
    .executeTakeFirst();
  if (!found) return undefined;
  const { notified: _notified, ...run } = found;
  return run as Run;
}

/** Wakes every replica's poller once the transaction commits: a finished run waits for it. */
export async function notifyRunsFinished(trx: Transaction<Database>, runId: number): Promise<void> {
  await sql`select pg_notify(${RUNS_FINISHED_CHANNEL}, ${String(runId)})`.execute(trx);
}

/** A scheduled tick's original row as the tick scheduler writes it in bulk: `running` and leased, `skipped`, or `missed` (with its error). */
export interface ScheduledRow {
  workflowId: number;
  tick: Date;
  status: 'running' | 'skipped' | 'missed';
  /** A missed tick's error, also its attempt's. */
  error?: string | null;
  startedAt?: Date | null;
  deadlineAt?: Date | null;
  leaseOwner?: string | null;
  leaseExpiresAt?: Date | null;
  finishedAt?: Date | null;
  outcomeNote?: string | null;
  processedAt?: Date | null;
}

/**
 * Inserts scheduled ticks' original rows in one statement whatever their
 * number (one array per column, so no limit on bind parameters applies). A
 * tick that already has its original row is absent from the result. Only ids
 * come back: parsing thousands of whole rows was a visible share of a crowded
 * boundary's CPU, and the rest of each row is what the caller just wrote.
 */
export async function insertScheduledRows(trx: Transaction<Database>, rows: ScheduledRow[]): Promise<{ id: number; workflowId: number; createdAt: Date }[]> {
  if (rows.length === 0) return [];
  const col = <T>(pick: (r: ScheduledRow) => T | null | undefined) => rows.map((r) => pick(r) ?? null);
  const iso = (pick: (r: ScheduledRow) => Date | null | undefined) => col((r) => pick(r)?.toISOString());
  const { rows: inserted } = await sql<{ id: number; workflowId: number; createdAt: Date }>`
    insert into runs (workflow_id, tick, trigger, attempt, status, started_at, deadline_at, lease_owner, lease_expires_at, finished_at, outcome_note, processed_at,
      error, attempt_status, attempt_error)
    select v.workflow_id, v.tick, 'schedule', 1, v.status, v.started_at, v.deadline_at, v.lease_owner, v.lease_expires_at, v.finished_at, v.outcome_note, v.processed_at,
      v.error, case when v.status = 'missed' then 'missed' end, v.error
    from unnest(
      ${col((r) => r.workflowId)}::int4[], ${iso((r) => r.tick)}::timestamptz[], ${col((r) => r.status)}::text[],
      ${iso((r) => r.startedAt)}::timestamptz[], ${iso((r) => r.deadlineAt)}::timestamptz[], ${col((r) => r.leaseOwner)}::text[],
      ${iso((r) => r.leaseExpiresAt)}::timestamptz[], ${iso((r) => r.finishedAt)}::timestamptz[], ${col((r) => r.outcomeNote)}::text[],
      ${iso((r) => r.processedAt)}::timestamptz[], ${col((r) => r.error)}::text[]
    ) as v(workflow_id, tick, status, started_at, deadline_at, lease_owner, lease_expires_at, finished_at, outcome_note, processed_at, error)
    ${ON_ORIGINAL_TICK}
    returning id, workflow_id, created_at
  `.execute(trx);
  return inserted;
}

/**
 * Inserts a `running` row inside the caller's transaction. For an original
 * row the unique index on (workflow, tick) makes a second insert for the same
 * tick a no-op: the result is undefined and the caller fires nothing.
 */
export async function insertRunningRun(trx: Transaction<Database>, spec: NewRunningRun, now: Date): Promise<Run | undefined> {
  return insertRunRow(
    trx,
    newRunRow({
      workflowId: spec.workflow.id,
      tick: spec.tick,
      trigger: spec.trigger,
      attempt: spec.attempt ?? 1,
      originalRunId: spec.originalRunId ?? null,
      status: 'running',
      startedAt: now,
      deadlineAt: new Date(now.getTime() + spec.timeoutSeconds * 1000),
      requestedBy: spec.requestedBy ?? null,
      externalId: spec.externalId ?? null,
      leaseOwner: spec.leaseOwner,
      leaseExpiresAt: spec.leaseOwner ? new Date(now.getTime() + RUN_LEASE_MS) : null,
      outcomeNote: spec.outcomeNote ?? null,
    }),
  );
}

export interface RunOutcome {
  status: 'succeeded' | 'failed';
  error?: string | null;
  stage?: string | null;
  rows?: number | null;
  exitCode?: number | null;
  logExcerpt?: string | null;
  logUrl?: string | null;
}

/**
 * PostgreSQL text cannot hold NUL, and run output is untrusted (binary output,
 * a hostile error text): without this one stray \0 turns a report into a 500
 * and a launcher's outcome into a lost run. Everything else is kept as sent;
 * escaping for Slack happens when rendering.
 */
export function storableOutcome<T extends RunOutcome>(outcome: T, tenantId: string): T {
  // Secrets go before anything is stored: the alert, its notifications and the API views are all read from here.
  // The bot's and this tenant's: another tenant's chosen values must not blank out this one's text (src/secrets.ts).
  const clean = (v: string | null | undefined) => (typeof v === 'string' ? redactSecrets(v.replace(/\u0000/g, '\uFFFD'), tenantId) : v);
  return { ...outcome, error: clean(outcome.error), stage: clean(outcome.stage), logExcerpt: clean(outcome.logExcerpt), logUrl: clean(outcome.logUrl) };
}

/**
 * The columns a finished run's outcome sets, made storable first; the same
 * whether a running row ends (finishRun) or a run is reported only by its end.
 */
export function outcomeColumns(reported: RunOutcome, now: Date, tenantId: string) {
  const outcome = storableOutcome(reported, tenantId);
  return {
    status: outcome.status,
    attemptStatus: outcome.status,
    attemptError: outcome.error ?? null,
    finishedAt: now,
    error: outcome.error ?? null,
    stage: outcome.stage ?? null,
    rows: outcome.rows ?? null,
    exitCode: outcome.exitCode ?? null,
    logExcerpt: outcome.logExcerpt ?? null,
    logUrl: outcome.logUrl ?? null,
  };
}

/**
 * A tick's verdict on its original row, carried from the attempt that decided
 * it (its error, group, stage, rows, exit code and log; the original's own
 * attempt stays in attempt_status/attempt_error): the retry engine's, and a
 * retry held back before its launch (held-back-launch.ts).
 */
export function verdictColumns(deciding: Pick<Run, 'error' | 'errorGroup' | 'stage' | 'rows' | 'exitCode' | 'logExcerpt' | 'logUrl' | 'finishedAt'>, failed: boolean, outcomeNote: string, now: Date) {
  return {
    status: failed ? ('failed' as const) : ('succeeded' as const),
    error: failed ? deciding.error : null,
    errorGroup: failed ? deciding.errorGroup : null,
    outcomeNote,
    stage: deciding.stage,
    rows: deciding.rows,
    exitCode: deciding.exitCode,
    logExcerpt: deciding.logExcerpt,
    logUrl: deciding.logUrl,
    finishedAt: deciding.finishedAt ?? now,
  };
}

/** A finished attempt's duration, from its own start (every path that ends a running row writes it). */
export function durationSince(now: Date) {
  return sql<number | null>`extract(epoch from ${now}::timestamptz - started_at)`;
}

export type FinishResult =
  | { kind: 'finished'; run: Run }
  | { kind: 'already_finished'; run: Run; same: boolean }
  /** The job's own end of a run the bot had failed as timed out: kept on it as a note, the timeout standing. */
  | { kind: 'ended_late'; run: Run; end: { status: 'succeeded' | 'failed'; error: string | null } }
  | { kind: 'not_found' };

/**
 * Ends a `running` run with its outcome (a conditional update: only a running
 * row changes) and wakes the pollers on every replica (this one's at once, after commit). Finishing twice with
 * the same outcome is harmless; with a different one it is reported, not applied.
 */
export async function finishRun(deps: Pick<Deps, 'db' | 'clock' | 'wake'>, runId: number, reported: RunOutcome): Promise<FinishResult> {
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute((trx) => finishRunIn(trx, runId, reported, now));
  if (result.kind === 'finished') deps.wake?.(RUNS_FINISHED_CHANNEL);
  return result;
}

/**
 * `finishRun` in the caller's transaction, without the wake-up; with `notify:
 * false` without the NOTIFY either (a reported end evaluated with its report
 * sends it only if the evaluation left the run to the pollers).
 */
export async function finishRunIn(trx: Transaction<Database>, runId: number, reported: RunOutcome, now: Date, options: { notify?: boolean } = {}): Promise<FinishResult> {
  // Whose run it is decides whose secrets its output is cleaned of.
  const owner = await trx.selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select('workflows.tenantId').where('runs.id', '=', runId).executeTakeFirst();
  if (!owner) return { kind: 'not_found' };
  const outcome = storableOutcome(reported, owner.tenantId);
  const updated = await trx
    .updateTable('runs')
    .set({ ...outcomeColumns(reported, now, owner.tenantId), durationSeconds: durationSince(now), leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
  if (updated) {
    if (options.notify !== false) await notifyRunsFinished(trx, runId);
    return { kind: 'finished', run: updated };
  }
  // Locked: two late ends of one run at once record one.
  const existing = await trx.selectFrom('runs').selectAll().where('id', '=', runId).forUpdate().executeTakeFirst();
  if (!existing) return { kind: 'not_found' };
  const repeat = repeatedReport(existing, outcome.status);
  if (repeat === 'late_end') {
    const end = { status: outcome.status as 'succeeded' | 'failed', error: outcome.error ?? null };
    const run = await trx
      .updateTable('runs')
      .set({ outcomeNote: lateEndNote(existing.outcomeNote, end, existing.deadlineAt, now), logExcerpt: existing.logExcerpt ?? outcome.logExcerpt ?? null, logUrl: existing.logUrl ?? outcome.logUrl ?? null })
      .where('id', '=', runId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { kind: 'ended_late', run, end };
  }
  return { kind: 'already_finished', run: existing, same: repeat === 'same' };
}
