import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { HistoryFacts } from '../domain/evaluate.js';

/**
 * The evaluator's facts for many workflows in one statement. Only settled
 * rows count: original rows whose verdict is final (succeeded, failed,
 * missed) and that the poller has processed. A row another replica has
 * claimed but not yet routed is invisible here until that replica commits, so
 * a failure about to become `pending_retry` is never counted as confirmed.
 *
 * A row's place in the timeline is its tick, or for a run outside any tick
 * (manual) its start.
 */
export async function loadHistoryFacts(trx: Transaction<Database>, workflowIds: number[]): Promise<Map<number, HistoryFacts>> {
  const out = new Map<number, HistoryFacts>();
  if (workflowIds.length === 0) return out;
  const { rows } = await sql<{
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
  }>`
    with h as (
      select r.workflow_id, r.id, r.status, r.tick, r.trigger, coalesce(r.tick, r.started_at, r.finished_at) as pos
      from runs r
      where r.workflow_id = any(${workflowIds}::int[])
        and r.original_run_id is null
        and r.processed_at is not null
        and r.status in ('succeeded', 'failed', 'missed')
    ),
    edges as (
      select workflow_id,
        max(pos) filter (where status = 'succeeded') as last_ok,
        max(pos) filter (where status <> 'succeeded') as last_bad
      from h group by workflow_id
    )
    select e.workflow_id,
      (select count(*) from h where h.workflow_id = e.workflow_id and h.tick is not null and h.status <> 'succeeded'
         and (e.last_ok is null or h.pos > e.last_ok))::int as failures,
      (select count(*) from h where h.workflow_id = e.workflow_id and h.status = 'succeeded'
         and (e.last_bad is null or h.pos > e.last_bad))::int as healthy,
      f.id as fail_run_id, f.error as fail_error, f.error_group as fail_group, f.stage as fail_stage, f.status as fail_status,
      f.tick as fail_tick, f.log_excerpt as fail_log_excerpt, f.log_url as fail_log_url,
      s.id as ok_run_id, s.trigger as ok_trigger, s.tick as ok_tick
    from edges e
    left join lateral (
      select r.* from h join runs r on r.id = h.id
      where h.workflow_id = e.workflow_id and h.tick is not null and h.status <> 'succeeded' and (e.last_ok is null or h.pos > e.last_ok)
      order by h.pos desc, h.id desc limit 1
    ) f on true
    left join lateral (
      select h.id, h.trigger, h.tick from h
      where h.workflow_id = e.workflow_id and h.status = 'succeeded' and (e.last_bad is null or h.pos > e.last_bad)
      order by h.pos desc, h.id desc limit 1
    ) s on true
  `.execute(trx);
  for (const r of rows) {
    out.set(r.workflowId, {
      failures: r.failures,
      healthyStreak: r.healthy,
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
    });
  }
  for (const id of workflowIds) if (!out.has(id)) out.set(id, { failures: 0, healthyStreak: 0, newestFailure: null, newestSuccess: null });
  return out;
}
