import { sql, type Transaction } from 'kysely';
import { rowFromJson } from '../db/json-rows.js';
import type { Database, Run, Tenant, Workflow } from '../db/schema.js';
import { lockedWithUpstreams, upstreamOfCte } from './upstream-blocks.js';
import { prepared } from '../db/prepared.js';

/** A one-off maintenance window as the claim returns it: the workflow's own, or its tenant's (`tenantWide`). */
export interface OneOffWindow {
  startsAt: Date;
  endsAt: Date;
  reason: string | null;
  tenantWide: boolean;
}

export interface ClaimedWorkflow {
  /** Locked (with every upstream of it) until the claiming transaction ends. */
  workflow: Workflow;
  tenant: Tenant;
  /**
   * The one-off maintenance windows that end after the workflow's oldest
   * claimed tick; with the recurring rules on the workflow and tenant rows,
   * every window that can hold one of its claimed ticks.
   */
  oneOffWindows: OneOffWindow[];
  /** It depends on another workflow / another depends on it: read with the locks that stand for it. */
  hasUpstreams: boolean;
  hasDownstreams: boolean;
}

export interface ClaimedBatch {
  /** In id order. */
  runs: Run[];
  /** The claimed runs' workflows, in id order. */
  workflows: ClaimedWorkflow[];
}

type ClaimRow = Run & {
  workflowRow: Record<string, unknown> | null;
  tenantRow: Record<string, unknown> | null;
  hasUpstreams: boolean | null;
  hasDownstreams: boolean | null;
  windows: [string, string, string | null, boolean][] | null;
};

/**
 * One round trip: the oldest finished, unprocessed runs of workflows whose
 * row it can lock (`skip locked`) together with the rows of all their
 * upstreams (`lockedWithUpstreams`: a dependency is judged once), marked
 * processed and returned with what routing and evaluation need of their
 * workflows: the workflow and tenant rows, whether the workflow has
 * upstreams or downstreams, and the one-off maintenance windows its ticks
 * may fall in (on the first run of each workflow only, so a workflow's rows
 * are sent once however many of its runs the batch holds). A workflow
 * that another replica is evaluating, or whose upstream it holds, is
 * skipped, not waited for: its runs stay for whoever takes it next, once
 * that replica has committed. So the runs of one workflow are evaluated in
 * the order they arrived (a replica never evaluates a newer run of a
 * workflow while an older one is in another's hands: "one failure more" is
 * never told before the failure it follows), replicas split a busy ledger
 * by workflow instead of queueing on each other's locks, and never deadlock.
 * The runs are walked tenant by tenant in turn (each tenant's oldest, then
 * each one's second oldest, …), so one tenant's backlog (hundreds of
 * its workflows failing at once) never holds back another tenant's run for
 * more than the batch it lands in (among the oldest `queueWindow` runs); within a tenant, and so within a workflow,
 * in id order on `runs_unprocessed`, locking each workflow as it is met (with `workflowId`, that workflow's runs only: a
 * row the calling transaction already holds counts as locked); the update takes a run only if it is still
 * unprocessed (another replica may have committed it since this statement began).
 */
/**
 * How many of the oldest unprocessed runs a claim ranks by tenant: fifty
 * batches' worth, at least 5,000. Sorting them all made each claim cost the
 * whole backlog (quadratic over a drain of 100,000 runs); within the window
 * a tenant's run waits at most one batch behind another tenant's backlog,
 * beyond it until that backlog is within the window.
 */
export function queueWindow(limit: number): number {
  return Math.max(5_000, limit * 50);
}

export async function claimBatch(trx: Transaction<Database>, now: Date, limit: number, workflowId?: number): Promise<ClaimedBatch> {
  // One workflow's runs only (a reported end evaluated in the report's transaction: src/engine/evaluate-now.ts); a text of its own, prepared apart.
  const only = workflowId === undefined ? sql`` : sql`and r.workflow_id = ${workflowId}`;
  const { rows } = await sql<ClaimRow>`${prepared}
    with recursive ${upstreamOfCte}, queue as materialized (
      -- The oldest runs only (an index range: a backlog of a million costs what one of thousands does), ranked and
      -- sorted before any row is locked; read back in this order (a CTE scan keeps it), the lock below is tried row by
      -- row until the limit: an order by there would lock every row first.
      select q.id, q.workflow_id from (
        select r.id, r.workflow_id from runs r
        where r.processed_at is null and r.status in ('succeeded', 'failed', 'missed') ${only}
        order by r.id limit ${queueWindow(limit)}
      ) q join workflows w on w.id = q.workflow_id
      order by row_number() over (partition by w.tenant_id order by q.id), q.id
    ), candidates as (
      select q.id, q.workflow_id from queue q
      where ${lockedWithUpstreams(sql.ref('q.workflow_id'))}
      limit ${limit}
    ), marked as (
      update runs set processed_at = ${now}
      from candidates c where runs.id = c.id and runs.processed_at is null
      returning runs.*
    ), firsts as (
      select workflow_id, min(id) as run_id, min(tick) as since from marked group by workflow_id
    ), context as materialized (
      -- materialized: computed once, not again for each run it is joined to
      select f.run_id, to_jsonb(w) as workflow_row, to_jsonb(t) as tenant_row,
        exists (select 1 from workflow_dependencies d where d.workflow_id = w.id) as has_upstreams,
        exists (select 1 from workflow_dependencies d where d.upstream_id = w.id) as has_downstreams,
        (select jsonb_agg(jsonb_build_array(m.starts_at, m.ends_at, m.reason, m.workflow_id is null) order by m.starts_at, m.id)
         from maintenance_windows m
         where m.tenant_id = w.tenant_id and m.ends_at > f.since and m.recurrence is null and (m.workflow_id is null or m.workflow_id = w.id)) as windows
      from firsts f join workflows w on w.id = f.workflow_id join tenants t on t.id = w.tenant_id
    )
    select marked.*, context.workflow_row, context.tenant_row, context.has_upstreams, context.has_downstreams, context.windows
    from marked left join context on context.run_id = marked.id
  `.execute(trx);
  const tenants = new Map<string, Tenant>();
  const workflows: ClaimedWorkflow[] = [];
  const runs = rows.map(({ workflowRow, tenantRow, hasUpstreams, hasDownstreams, windows, ...run }) => {
    if (workflowRow && tenantRow) {
      const tenantId = tenantRow.id as string;
      if (!tenants.has(tenantId)) tenants.set(tenantId, rowFromJson<Tenant>(tenantRow));
      workflows.push({
        workflow: rowFromJson<Workflow>(workflowRow),
        tenant: tenants.get(tenantId)!,
        oneOffWindows: (windows ?? []).map(([startsAt, endsAt, reason, tenantWide]) => ({ startsAt: new Date(startsAt), endsAt: new Date(endsAt), reason, tenantWide })),
        hasUpstreams: !!hasUpstreams,
        hasDownstreams: !!hasDownstreams,
      });
    }
    return run as Run;
  });
  return { runs: runs.sort((a, b) => a.id - b.id), workflows: workflows.sort((a, b) => a.workflow.id - b.workflow.id) };
}
