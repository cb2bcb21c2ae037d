import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Run, RunTrigger, Workflow } from '../db/schema.js';
import { profileFor } from '../domain/cadence.js';
import { formatDuration } from '../domain/durations.js';
import { isRepeatedStart } from '../domain/reported-outcome.js';
import { lateStartNote, lateTickOfEnd, reportedAfterGraceMs, tickCandidates, utcCrontabNote } from '../domain/tick-match.js';
import { insertRunningRun, insertRunRow, newRunRow, outcomeColumns, type RunOutcome } from './runs.js';

/**
 * Runs reported from outside (the ingest API and pings): the job ran
 * somewhere else and tells the ledger. Shared by both edges so a ping and an
 * API call for the same workflow are matched to ticks the same way.
 */

export interface TickMatch {
  tick: Date | null;
  trigger: RunTrigger;
  /** The tick's row, recorded missed, that a late end takes over (`insertReportedFinished`). */
  missed?: Run;
  /** With `startWithoutRid`, no free tick: the candidate tick's run this start is sent again for (`isRepeatedStart`). */
  repeatedStart?: Run;
  /** A run outside every tick whose start says why (a crontab kept in UTC, `utcCrontabNote`; a start after its grace, `lateStartNote`): its outcome note. */
  note?: string;
}

/**
 * A run reported without a tick belongs to the latest fire time at or before
 * its start when that is within the grace and the tick has no row yet; for an
 * observed workflow, else to the next fire time when the start is at most a
 * moment early (src/domain/tick-match.ts: the outside scheduler's clock may
 * run a little ahead of the bot's) and that tick has no row yet; otherwise it
 * is an external run outside any tick (it still counts as a success for
 * resolution, and never as a second row for a tick).
 *
 * A run reported only by its end (`endOnly`) may also be its tick's late
 * report: a job that sends no start and runs past the grace has its tick
 * recorded missed before the end arrives. Such an end takes over a
 * candidate tick's missed row, else the latest fire time at or before its
 * start, up to the timeout after it, when that tick's row is missed or not there yet
 * (observed workflows; `lateTickOfEnd`). Before, every such tick stayed a
 * failure (a daily job alerted critical every day, then resolved).
 *
 * A ping start without a rid (`startWithoutRid`) that finds no free tick may
 * be a candidate tick's start sent again (`isRepeatedStart`): that run is
 * returned as `repeatedStart`, and no row is written.
 */
export async function matchTick(trx: Transaction<Database>, workflow: Workflow, startedAt: Date, options: { endOnly?: boolean; startWithoutRid?: boolean } = {}): Promise<TickMatch> {
  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, startedAt);
  let missed: TickMatch | undefined;
  let repeatedStart: Run | undefined;
  for (const tick of tickCandidates(workflow, startedAt, profile)) {
    const row = await tickRow(trx, workflow.id, tick);
    if (!row) return { tick, trigger: 'schedule' };
    if (options.endOnly && !missed && row.status === 'missed') missed = { tick, trigger: 'schedule', missed: row };
    if (options.startWithoutRid && !repeatedStart && isRepeatedStart(workflow.mode, row)) repeatedStart = row;
  }
  if (missed) return missed;
  if (repeatedStart) return { tick: null, trigger: 'external', repeatedStart };
  const late = lateTickOfEnd(workflow, startedAt, profile);
  const lateRow = late && (await tickRow(trx, workflow.id, late));
  if (late && options.endOnly) {
    if (!lateRow) return { tick: late, trigger: 'schedule' };
    if (lateRow.status === 'missed') return { tick: late, trigger: 'schedule', missed: lateRow };
  }
  // A start after its tick's grace stays outside the tick (it did not start in time), saying how late it came.
  const lateStart = late && !options.endOnly && (!lateRow || lateRow.status === 'missed') ? lateStartNote(late, startedAt, profile.graceSeconds, workflow.timezone) : null;
  const note = utcCrontabNote(workflow, startedAt, profile) ?? lateStart;
  return { tick: null, trigger: 'external', ...(note ? { note } : {}) };
}

export async function tickRow(trx: Transaction<Database>, workflowId: number, tick: Date): Promise<Run | undefined> {
  return trx.selectFrom('runs').selectAll().where('workflowId', '=', workflowId).where('tick', '=', tick).where('originalRunId', 'is', null).executeTakeFirst();
}

/**
 * How long a report waits for its workflow's row. Other reports and the
 * loops hold it for milliseconds; a lock held longer is an operator's open
 * transaction or a stalled session, and waiting for it until the statement
 * timeout (30 s) let one job resending its reports take every connection of
 * the API's pool, so every other workflow's reports were refused too. Below
 * the pool's connect timeout (5 s), so a report queued behind such waits
 * gets its connection. The report is refused with 503 and sent again.
 */
export const REPORT_LOCK_TIMEOUT_MS = 2_000;

/**
 * The enabled workflow of an enabled tenant that a report names (by tenant
 * and name, or by ping key), locked so two reports with one externalId (or
 * one ping rid) cannot both insert. One statement: it sits between a failure
 * and its alert. It bounds its own lock wait, and the rest of the report's
 * transaction's (`bounded`: SQLSTATE 55P03 past REPORT_LOCK_TIMEOUT_MS).
 */
export async function lockReportedWorkflow(trx: Transaction<Database>, by: { tenantId: string; name: string } | { pingKey: string }): Promise<Workflow | undefined> {
  const enabled = trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .crossJoin(sql<{ lockTimeout: string }>`(select set_config('lock_timeout', ${`${REPORT_LOCK_TIMEOUT_MS}ms`}, true) as lock_timeout)`.as('bounded'))
    .selectAll('workflows')
    .where('workflows.enabled', '=', true)
    .where('tenants.enabled', '=', true);
  const named = 'pingKey' in by ? enabled.where('workflows.pingKey', '=', by.pingKey) : enabled.where('workflows.tenantId', '=', by.tenantId).where('workflows.name', '=', by.name);
  return named.forUpdate('workflows').executeTakeFirst();
}

/**
 * Whether a ping key names an enabled workflow of an enabled tenant: one
 * unique-index lookup, no lock, asked before a ping's body is read so that a
 * made-up key never makes the server read a body (src/http/ping-routes.ts).
 * The report itself looks the key up again, locked (lockReportedWorkflow).
 */
export async function pingKeyKnown(db: Kysely<Database>, pingKey: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select('workflows.tenantId')
    .where('workflows.pingKey', '=', pingKey)
    .where('workflows.enabled', '=', true)
    .where('tenants.enabled', '=', true)
    .executeTakeFirst();
  return row?.tenantId;
}

export interface ReportedStart {
  workflow: Workflow;
  match: TickMatch;
  externalId: string | null;
}

export async function insertReportedRunning(trx: Transaction<Database>, start: ReportedStart, now: Date): Promise<Run | undefined> {
  const profile = profileFor(start.workflow.cron, start.workflow.timezone, start.workflow.policy, now);
  return insertRunningRun(
    trx,
    { workflow: start.workflow, tick: start.match.tick, trigger: start.match.trigger, externalId: start.externalId, timeoutSeconds: profile.timeoutSeconds, leaseOwner: null, outcomeNote: start.match.note },
    now,
  );
}

/**
 * A run reported only by its end (no start was sent): inserted finished and
 * unprocessed, without a NOTIFY: its caller evaluates it at once and wakes
 * the pollers only if that left it to them (src/engine/evaluate-now.ts).
 * Undefined when the tick already has its row (nothing is written).
 *
 * When the match names a missed row (a late end, see `matchTick`), that row
 * takes the reported outcome instead: one row per tick, its verdict the real
 * one (a late success is a success), unprocessed again so the evaluator
 * counts it anew. Its note keeps the missed record ("recorded missed at …;
 * reported … after its grace").
 */
export async function insertReportedFinished(
  trx: Transaction<Database>,
  start: ReportedStart,
  reported: RunOutcome,
  now: Date,
  options: { durationSeconds?: number } = {},
): Promise<Run | undefined> {
  const { durationSeconds } = options;
  const columns = {
    ...outcomeColumns(reported, now, start.workflow.tenantId),
    // Without a reported duration its start is unknown: "now" keeps tick matching as it was, the duration stays null.
    startedAt: durationSeconds === undefined ? now : new Date(now.getTime() - durationSeconds * 1000),
    durationSeconds: durationSeconds ?? null,
    externalId: start.externalId,
    outcomeNote: start.match.note ?? null,
  };
  if (start.match.missed) return takeOverMissedTick(trx, start, start.match.missed, columns, now);
  return insertRunRow(trx, newRunRow({ workflowId: start.workflow.id, tick: start.match.tick, trigger: start.match.trigger, ...columns }));
}

/** A missed tick's row given the outcome of its late report (a conditional update: only a row still missed changes). */
async function takeOverMissedTick(trx: Transaction<Database>, start: ReportedStart, missed: Run, columns: Partial<Run>, now: Date): Promise<Run | undefined> {
  const { graceSeconds } = profileFor(start.workflow.cron, start.workflow.timezone, start.workflow.policy, now);
  const late = formatDuration(reportedAfterGraceMs(missed.tick!, now, graceSeconds));
  const note = `reported ${late} after its grace (recorded missed at ${(missed.finishedAt ?? now).toISOString()})`;
  return trx
    .updateTable('runs')
    .set({ ...columns, trigger: 'schedule', errorGroup: null, outcomeNote: note, processedAt: null })
    .where('id', '=', missed.id)
    .where('status', '=', 'missed')
    .returningAll()
    .executeTakeFirst();
}
