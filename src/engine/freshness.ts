import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { supervisedDeadlineCutoff } from '../domain/overdue.js';
import { TIMED_OUT } from '../domain/reported-outcome.js';
import { nextFireAfter } from '../domain/schedule.js';
import { profileOf } from '../ledger/profiles.js';
import { durationSince, insertRunRow, newRunRow, RUNS_FINISHED_CHANNEL } from '../ledger/runs.js';
import { watchedThroughout, type UptimeSpan } from '../domain/monitor-uptime.js';
import { observedTickWindow, windowClosesAt, type ObservedTickWindow } from '../domain/observed-dst.js';
import { UPTIME_SLACK_MS, uptimeSpans } from './uptime.js';

/**
 * Silence is data (DESIGN.md, core idea 8). Three things turn into ledger
 * rows the poller then processes like any finished run:
 * - a `running` row past its deadline → failed "timed out" (one a live
 *   replica still supervises: a minute later, its watchdog's turn first);
 * - a `running` row whose lease expired (the replica supervising it died) → failed "worker lost";
 * - an observed workflow's tick with no run by tick + grace (on a DST night,
 *   by the end of the window its outside scheduler may run it in:
 *   domain/observed-dst.ts) → a `missed` original row; or `skipped` when its
 *   scheduler may legitimately not run it (the note says why), or when for
 *   any moment of its window no replica of the monitor was alive (the report
 *   may have been sent to nobody); a skipped tick never pages.
 *
 * Managed workflows' ticks are the tick scheduler's (it fires each one or
 * records it skipped or missed, src/domain/catch-up.ts, and advances their
 * next_tick_at). For observed ones next_tick_at is this detector's cursor:
 * the next tick not yet accounted for.
 */

export { TIMED_OUT };
export const WORKER_LOST = 'worker lost';

/** At most this many ticks of one workflow per pass: a long outage is worked through over several passes. */
const MAX_TICKS_PER_PASS = 500;
const WORKFLOWS_PER_PASS = 200;
/** Longer than any zone's offset change (2 h, historically): how far before its tick a run of a tick a gap moved may start. */
const MAX_SHIFT_MS = 3 * 3_600_000;

export async function checkFreshness(deps: Pick<Deps, 'db' | 'clock'>): Promise<boolean> {
  const now = deps.clock.now();
  const failed = await failOverdueRuns(deps, now);
  const ticks = await recordMissedTicks(deps, now);
  return failed + ticks > 0;
}

/** Conditional updates like finishRun's: only a row still `running` changes, so replicas fail each run once. */
export async function failOverdueRuns(deps: Pick<Deps, 'db'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const fail = (error: string) => ({
      status: 'failed' as const,
      attemptStatus: 'failed' as const,
      error,
      attemptError: error,
      finishedAt: now,
      durationSeconds: durationSince(now),
      leaseOwner: null,
      leaseExpiresAt: null,
    });
    // Deadline first: a run past both its deadline and its lease timed out. A run past its deadline
    // that a live replica still supervises is left to that replica's watchdog for a while (domain/overdue.ts).
    const timedOut = await trx
      .updateTable('runs')
      .set(fail(TIMED_OUT))
      .where('status', '=', 'running')
      .where('deadlineAt', '<=', now)
      .where((eb) => eb.or([eb('leaseExpiresAt', 'is', null), eb('leaseExpiresAt', '<=', now), eb('deadlineAt', '<=', supervisedDeadlineCutoff(now))]))
      .returning('id')
      .execute();
    const lost = await trx.updateTable('runs').set(fail(WORKER_LOST)).where('status', '=', 'running').where('leaseExpiresAt', '<=', now).returning('id').execute();
    const n = timedOut.length + lost.length;
    if (n > 0) await sql`select pg_notify(${RUNS_FINISHED_CHANNEL}, 'freshness')`.execute(trx);
    return n;
  });
}

export async function recordMissedTicks(deps: Pick<Deps, 'db'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('workflows')
      .selectAll()
      .where('mode', '=', 'observed')
      .where('enabled', '=', true)
      .where('monitoring', '=', true)
      .where('paused', '=', false)
      // A tenant removed from the file is watched no more (domain/watched.ts): none of its ticks is missed.
      .where((eb) => eb.exists(eb.selectFrom('tenants').select('tenants.id').whereRef('tenants.id', '=', 'workflows.tenantId').where('tenants.enabled', '=', true)))
      .where('nextTickAt', 'is not', null)
      .where('nextTickAt', '<=', now)
      .orderBy('nextTickAt')
      .limit(WORKFLOWS_PER_PASS)
      .forUpdate()
      .skipLocked()
      .execute();
    let recorded = 0;
    // Ticks before now only: the spans that bear on any of them, read once per pass (a tick a gap moved may run from up to
    // a transition's shift before it).
    const spans = due.length > 0 ? await uptimeSpans(trx, new Date(due[0]!.nextTickAt!.getTime() - MAX_SHIFT_MS), now) : [];
    for (const workflow of due) {
      const profile = profileOf(workflow, now);
      const graceMs = profile.graceSeconds * 1000;
      let tick = workflow.nextTickAt!;
      for (let i = 0; i < MAX_TICKS_PER_PASS; i++) {
        // When its run may come is the outside scheduler's, on a DST night (domain/observed-dst.ts).
        const window = observedTickWindow(workflow.cron, workflow.timezone, tick);
        const windowEnd = windowClosesAt(window, graceMs);
        if (windowEnd.getTime() > now.getTime()) break;
        if (await recordTickWithoutRun(trx, workflow.id, tick, window, windowEnd, spans, now)) recorded++;
        tick = nextFireAfter(workflow.cron, workflow.timezone, tick);
      }
      await trx.updateTable('workflows').set({ nextTickAt: tick }).where('id', '=', workflow.id).execute();
    }
    if (recorded > 0) await sql`select pg_notify(${RUNS_FINISHED_CHANNEL}, 'missed')`.execute(trx);
    return recorded;
  });
}

/**
 * The tick's row when no run of it started in its window: `missed` (a
 * confirmed failure); `skipped` when a reasonable scheduler may not run it
 * at all (a DST night: the note says why), or when for any moment of its
 * window no replica of the monitor was alive (the report may have been sent
 * to nobody). A skipped tick never pages. True when a row was written.
 */
async function recordTickWithoutRun(
  trx: Transaction<Database>,
  workflowId: number,
  tick: Date,
  window: ObservedTickWindow,
  windowEnd: Date,
  spans: UptimeSpan[],
  now: Date,
): Promise<boolean> {
  const windowStart = window.spans[0]!.from;
  const seen = await trx
    .selectFrom('runs')
    .select('id')
    .where('workflowId', '=', workflowId)
    .where('originalRunId', 'is', null)
    .where((eb) => eb.or([eb('tick', '=', tick), eb.and([eb('tick', 'is', null), eb('startedAt', '>=', windowStart), eb('startedAt', '<=', windowEnd)])]))
    .limit(1)
    .executeTakeFirst();
  if (seen) return false;
  // A report may come any time in the window: a bot down for any of it may have missed it.
  const up = watchedThroughout(spans, windowStart, windowEnd, UPTIME_SLACK_MS);
  const missed = up && window.mayNotRun === null;
  const error = missed ? `missed: no run started by ${windowEnd.toISOString()}` : null;
  const inserted = await insertRunRow(
    trx,
    newRunRow({
      workflowId,
      tick,
      trigger: 'schedule',
      status: missed ? 'missed' : 'skipped',
      attemptStatus: missed ? 'missed' : null,
      attemptError: error,
      error,
      outcomeNote: missed ? null : up ? window.mayNotRun : 'the monitor was not running for all of this tick\'s grace',
      finishedAt: now,
      // A skipped tick is never evaluated; a missed one goes through the poller.
      processedAt: missed ? null : now,
    }),
  );
  return inserted !== undefined;
}
