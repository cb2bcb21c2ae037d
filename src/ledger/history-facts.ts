import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { HistoryFacts } from '../domain/evaluate.js';
import { FLAP_WINDOW, type TickOutcome } from '../domain/flapping.js';
import { prepared } from '../db/prepared.js';

/**
 * The healthy streak is read from at most this many newest ticks. Its only
 * uses are "has it reached recoverAfter" (at most 100, see the workflows file
 * schema) and the streak shown while it has not, so a longer streak counted
 * as this many changes no decision; a healthy workflow's years of history are
 * never read.
 */
export const HEALTHY_WINDOW = 200;

const STATUSES = { success: sql.raw(`('succeeded')`), failure: sql.raw(`('failed', 'missed')`), any: sql.raw(`('succeeded', 'failed', 'missed')`) };

/**
 * The one condition every walk below shares: a settled original row `r` of
 * the workflow `w` (its verdict final and processed by the poller), on a tick
 * or outside any, with an outcome of the given kind. Literal SQL, so the
 * planner sees the `runs_history` index's own predicate.
 */
function settled(place: 'tick' | 'no tick', outcome: keyof typeof STATUSES) {
  return sql`r.workflow_id = w.workflow_id and r.original_run_id is null and r.tick is ${sql.raw(place === 'tick' ? 'not null' : 'null')}
        and r.status in ${STATUSES[outcome]} and r.processed_at is not null`;
}

/**
 * A confirmed tick failure of the current streak (after `cf.count_from`: the
 * last success, or a later end of an upstream incident that held the workflow
 * back): the count and the newest one read the same rows. The bound is an
 * index condition (`r.tick > coalesce(…)`), never `… is null or r.tick > …`: see below.
 */
const FAILURE_SINCE_LAST_SUCCESS = sql`${settled('tick', 'failure')} and r.tick > coalesce(cf.count_from, '-infinity') and not r.in_maintenance`;

/**
 * The evaluator's facts for many workflows in one statement. Only settled
 * rows count: original rows whose verdict is final (succeeded, failed,
 * missed) and that the poller has processed. A row another replica has
 * claimed but not yet routed is invisible here until that replica commits, so
 * a failure about to become `pending_retry` is never counted as confirmed.
 *
 * A row's place in the timeline is its tick, or for a run outside any tick
 * (manual) its start.
 *
 * Bounded reads (every scan walks runs_history, newest tick first):
 * - the newest success stops the walk that counts failures, so the cost is
 *   the current failure streak, not the history; the newest success and the
 *   newest failure are each the first row of a backward index scan;
 * - the healthy streak and the newest success are read only for `withStreak`
 *   (workflows with an open alert: nothing else looks at them), from the
 *   newest HEALTHY_WINDOW ticks (the streak's walk is bounded below by the
 *   oldest of them, so it reads that window, never the workflow's history).
 *   Each of those walks says `w.streak` inside its own WHERE: a join
 *   condition alone (`on w.streak`) is applied after the lateral subquery
 *   has run, so every workflow paid for them;
 * - the newest FLAP_WINDOW tick outcomes (flapping) only for `withStreak`
 *   and for workflows failing now (failing intermittently opens an alert):
 *   an index range scan of ten rows;
 * - runs outside any tick (manual, rare) are read from that index's null entries;
 * - "newer than the newest success" is written `r.tick > coalesce(e.last_ok,
 *   '-infinity')`, never `e.last_ok is null or r.tick > e.last_ok`: the OR
 *   is no index condition, and the planner then read every tick the
 *   workflow ever had to count its failures (10 ms a workflow at a thousand
 *   ticks each; bench/ledger-growth.ts, test/ledger/query-plans.test.ts).
 *
 * A tick failure inside a maintenance window (runs.in_maintenance) is not a
 * failure here: it neither counts, nor breaks a healthy streak, nor flaps.
 *
 * Failures are counted from the workflow's last success, from the end of
 * the newest upstream incident that held it back (upstream_blocks), or from
 * the newest of its alerts closed by no run (resolved by hand, or by the
 * workflow or its tenant being disabled), whichever is later: after its
 * upstream recovers, a downstream workflow is judged on its own history from
 * then on (docs/alerts.md, dependencies); after a person said an alert was
 * handled, the ticks after it say whether it is, exactly as after a recovery
 * (a 5-minute job's streak of 150 before it does not open the next alert
 * past its "kept failing" threshold). The boundary is the alert's own
 * `resolved_at`, history like the runs, never a stored counter.
 *
 * An alert opening now outlived the upstream incident only when that
 * incident's end is the newest of these boundaries: after a success, or a
 * hand resolve of the downstream's own alert that outlived it, the upstream
 * is history and the next alert is the workflow's own (no note, no link).
 */
export async function loadHistoryFacts(trx: Transaction<Database>, workflowIds: number[], withStreak: number[] = workflowIds): Promise<Map<number, HistoryFacts>> {
  const out = new Map<number, HistoryFacts>();
  if (workflowIds.length === 0) return out;
  const { rows } = await factsQuery(workflowIds, withStreak).execute(trx);
  for (const r of rows) out.set(r.workflowId, toHistoryFacts(r));
  for (const id of workflowIds) if (!out.has(id)) out.set(id, { failures: 0, healthyStreak: 0, newestFailure: null, newestSuccess: null });
  return out;
}

function factsQuery(workflowIds: number[], withStreak: number[]) {
  return sql<FactsRow>`${prepared}
    with w as (
      select id as workflow_id, id = any(${withStreak}::int[]) as streak from unnest(${workflowIds}::int[]) as id group by id
    )
    select w.workflow_id, fc.n as failures, coalesce(hs.n, 0) + coalesce(hm.n, 0) as healthy,
      f.id as fail_run_id, f.error as fail_error, f.error_group as fail_group, f.stage as fail_stage, f.status as fail_status,
      f.tick as fail_tick, f.log_excerpt as fail_log_excerpt, f.log_url as fail_log_url,
      s.id as ok_run_id, s.trigger as ok_trigger, s.tick as ok_tick, rt.outcomes as recent,
      case when ub.pos > coalesce(greatest(e.last_ok, hr.pos), '-infinity') then ub.id end as outlived_alert_id
    from w
    -- newest settled success with a tick: the walk stops at it. An original row's tick is unique in its workflow
    -- (the unique runs_history index), so ordering by tick alone is exact and lets the index scan stop at the first row;
    -- a second key (id) made the planner sort every matching row of the workflow first.
    left join lateral (
      select r.id, r.trigger, r.tick as pos from runs r
      where ${settled('tick', 'success')}
      order by r.tick desc limit 1
    ) okt on true
    -- runs outside any tick: newest success and newest failure
    left join lateral (
      select r.id, r.trigger, coalesce(r.started_at, r.finished_at) as pos from runs r
      where ${settled('no tick', 'success')}
      order by 3 desc, r.id desc limit 1
    ) okm on true
    left join lateral (
      select max(coalesce(r.started_at, r.finished_at)) as pos from runs r
      where w.streak and ${settled('no tick', 'failure')}
    ) badm on w.streak
    left join lateral (
      select max(t.tick) filter (where t.status <> 'succeeded' and not t.in_maintenance) as pos, min(t.tick) as oldest from (
        select r.tick, r.status, r.in_maintenance from runs r
        where w.streak and ${settled('tick', 'any')}
        order by r.tick desc limit ${HEALTHY_WINDOW}
      ) t
    ) badt on w.streak
    -- the newest upstream incident that held this workflow back and has resolved: counting starts again there
    left join lateral (
      select ua.id, ua.resolved_at as pos from upstream_blocks b join alerts ua on ua.id = b.upstream_alert_id
      where b.workflow_id = w.workflow_id and ua.status = 'resolved'
      order by ua.resolved_at desc limit 1
    ) ub on true
    -- the newest alert closed by no run (by hand, or the workflow or its tenant disabled): a person said it was
    -- handled, so counting starts again there and the next runs say whether it is
    left join lateral (
      select max(a.resolved_at) as pos from alerts a
      where a.workflow_id = w.workflow_id and a.status = 'resolved' and a.resolved_by_run_id is null
    ) hr on true
    cross join lateral (select greatest(okt.pos, okm.pos) as last_ok, greatest(badt.pos, badm.pos) as last_bad) e
    cross join lateral (select greatest(e.last_ok, ub.pos, hr.pos) as count_from) cf
    cross join lateral (
      select count(*)::int as n from runs r
      where ${FAILURE_SINCE_LAST_SUCCESS}
    ) fc
    left join lateral (
      select r.* from runs r
      where ${FAILURE_SINCE_LAST_SUCCESS}
      order by r.tick desc limit 1
    ) f on true
    ${streakJoin()}
    -- the newest success, if it is newer than every failure
    left join lateral (
      select c.id, c.trigger, c.tick from (
        select okt.id, okt.trigger, okt.pos as tick, okt.pos
        union all
        select okm.id, okm.trigger, null::timestamptz, okm.pos
      ) c
      where c.id is not null and (e.last_bad is null or c.pos > e.last_bad)
      order by c.pos desc, c.id desc limit 1
    ) s on w.streak
    ${flapJoin()}
  `;
}

/**
 * The healthy streak (`hs` of ticks, `hm` of runs outside any tick): the
 * successes after the newest failure, and after the success an open alert
 * opened by a cause knew of then (`known_success_run_id`): from before the
 * cause, it and those before it say nothing of it.
 */
function streakJoin() {
  return sql`
    left join lateral (
      select coalesce(k.tick, k.started_at, k.finished_at) as pos from alerts a join runs k on k.id = a.known_success_run_id
      where w.streak and a.workflow_id = w.workflow_id and a.status = 'open'
    ) ka on w.streak
    cross join lateral (select greatest(e.last_bad, ka.pos) as streak_from) sf
    left join lateral (
      select count(*)::int as n from (
        select 1 from runs r
        where w.streak and ${settled('tick', 'success')} and r.tick > coalesce(sf.streak_from, '-infinity') and r.tick >= coalesce(badt.oldest, '-infinity')
        order by r.tick desc limit ${HEALTHY_WINDOW}
      ) x
    ) hs on w.streak
    left join lateral (
      select count(*)::int as n from runs r
      where w.streak and ${settled('no tick', 'success')} and (sf.streak_from is null or coalesce(r.started_at, r.finished_at) > sf.streak_from)
    ) hm on w.streak
  `;
}

/**
 * The newest tick outcomes, newest first, for flapping: of a workflow with an
 * open alert (how it resolves), and of one failing now without one (whether it
 * fails intermittently), whose window starts where its failure count does
 * (after an upstream incident's end or a resolve by hand, not at its last success).
 */
function flapJoin() {
  return sql`
    -- the newest tick outcomes, newest first, for flapping
    left join lateral (
      select array_agg(t.status order by t.tick desc) as outcomes from (
        select r.tick, r.status from runs r
        where (w.streak or fc.n > 0) and ${settled('tick', 'any')}
          and not (r.in_maintenance and r.status <> 'succeeded')
          -- one bound, an index condition (an OR here would read the workflow's whole history when fewer rows follow it)
          and r.tick > case when w.streak then '-infinity' else coalesce(greatest(ub.pos, hr.pos), '-infinity') end
        order by r.tick desc limit ${FLAP_WINDOW}
      ) t
    ) rt on w.streak or fc.n > 0
  `;
}

interface FactsRow {
  workflowId: number;
  failures: number;
  healthy: number;
  failRunId: number | null;
  failError: string | null;
  failGroup: string | null;
  failStage: string | null;
  failStatus: 'failed' | 'missed' | null;
  failTick: Date | null;
  failLogExcerpt: string | null;
  failLogUrl: string | null;
  okRunId: number | null;
  okTrigger: string | null;
  okTick: Date | null;
  recent: string[] | null;
  outlivedAlertId: number | null;
}

function toHistoryFacts(r: FactsRow): HistoryFacts {
  return {
    failures: r.failures,
    healthyStreak: Number(r.healthy),
    newestFailure:
      r.failRunId !== null
        ? {
            runId: r.failRunId,
            error: r.failError,
            errorGroup: r.failGroup,
            stage: r.failStage,
            status: r.failStatus ?? 'failed',
            tick: r.failTick,
            logExcerpt: r.failLogExcerpt,
            logUrl: r.failLogUrl,
          }
        : null,
    newestSuccess: r.okRunId !== null ? { runId: r.okRunId, trigger: r.okTrigger ?? 'schedule', tick: r.okTick } : null,
    recentOutcomes: (r.recent ?? []).map((status): TickOutcome => (status === 'succeeded' ? 'success' : 'failure')),
    ...(r.outlivedAlertId !== null ? { upstreamResolved: { alertId: Number(r.outlivedAlertId) } } : {}),
  };
}
