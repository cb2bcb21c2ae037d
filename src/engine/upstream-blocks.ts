import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Alert, Database, Tenant } from '../db/schema.js';
import { blockingIncident, dependencyVerdict, upstreamHolds, type UpstreamIncident } from '../domain/dependencies.js';
import type { FailureFacts } from '../domain/evaluate.js';
import type { EventInput } from '../ledger/alert-events.js';

/**
 * Workflow dependencies in the evaluator (issue 16, docs/alerts.md). While an
 * upstream workflow (direct or transitive) has an open alert, a downstream
 * failure opens no alert of its own: it is recorded against the downstream
 * (`upstream_blocks`) and told in the upstream's thread (`upstream_affected`,
 * one reply the Slack transport edits as more are hit).
 *
 * Why it is decided once: the poller's claim locks a batch's workflow rows
 * together with every upstream of them, in id order, or skips the run
 * (`lockedWithUpstreams`). The evaluation that opens or resolves an
 * upstream's alert holds that upstream's row, so a downstream evaluation
 * either sees the alert committed or runs first (and the upstream, opening
 * after, links the downstream's open alert); two downstream batches blocked
 * by one incident take their turns on its row (the second skips the
 * downstream's runs until the first commits), so each sees the other's block
 * when it rewrites the list.
 */

/**
 * The transitive upstreams of every workflow, `upstream_of(workflow_id,
 * upstream_id)`: one entry of a `with recursive` list (the dependency graph is
 * configuration, small beside the ledger).
 */
export const upstreamOfCte = sql`upstream_of(workflow_id, upstream_id) as (
      select d.workflow_id, d.upstream_id from workflow_dependencies d
      union
      select u.workflow_id, d.upstream_id from upstream_of u join workflow_dependencies d on d.workflow_id = u.upstream_id
    )`;

/**
 * A condition for the poller's claim (with `upstreamOfCte` in scope): this
 * transaction locks all the upstreams of the workflow `workflowId`, in id
 * order, then the workflow itself, skipping rows another transaction holds;
 * true only if it got every one of them. The workflow's own row is tried
 * only once its upstreams are held (a `case` is evaluated in order), so a
 * workflow whose upstream is busy is not left locked for nothing (another
 * replica would skip its runs). A replica never waits here, so never
 * deadlocks, and never judges a dependency another replica is judging.
 */
export function lockedWithUpstreams(workflowId: RawBuilder<unknown>) {
  const upstreams = sql`select u.upstream_id from upstream_of u where u.workflow_id = ${workflowId} and u.upstream_id <> ${workflowId}`;
  const self = sql`exists (select 1 from workflows w where w.id = ${workflowId} for update skip locked)`;
  // Most workflows have no upstream: their own row is all there is to lock.
  return sql<boolean>`case
    when not exists (${upstreams}) then ${self}
    when (select count(*) from (select w.id from workflows w where w.id = any(array(${upstreams})) order by w.id for update skip locked) held)
      = (select count(*) from (${upstreams}) u)
    then ${self}
    else false
  end`;
}

/**
 * How long the poller waits for its turn on a dependency group. Another
 * replica's batch holds it for well under a second; a lock held longer is
 * an operator's open transaction or a stalled session, and waiting it out
 * (until the statement timeout, 30 s) held every other run back with it.
 */
export const UPSTREAM_TURN_LOCK_TIMEOUT_MS = 2_000;

/**
 * When a claim came back empty: in a transaction that holds nothing yet,
 * waits for the upstreams of the oldest finished, unprocessed runs (locks
 * them, in id order), so that the claim after it (a new statement, a new
 * snapshot) takes its turn on a busy dependency group instead of leaving it
 * to the replica that holds it. How many rows it locked (none without dependencies).
 * A lock not granted within UPSTREAM_TURN_LOCK_TIMEOUT_MS fails it (and its
 * transaction) with SQLSTATE 55P03: the lock timeout is set, for this
 * transaction, by the statement itself (`bounded`, read before any row is
 * locked), so an idle poll costs no statement more.
 */
export async function awaitUpstreamTurn(trx: Transaction<Database>, limit: number): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    with recursive ${upstreamOfCte}, bounded as (select set_config('lock_timeout', ${`${UPSTREAM_TURN_LOCK_TIMEOUT_MS}ms`}, true))
    select w.id from workflows w cross join bounded
    where w.id in (
      select u.upstream_id from upstream_of u where u.workflow_id in (
        select r.workflow_id from runs r where r.processed_at is null and r.status in ('succeeded', 'failed', 'missed') order by r.id limit ${limit}
      )
    )
    order by w.id for update of w
  `.execute(trx);
  return rows.length;
}

/** Whether the workflow `id` is in shadow now (its own flag or its tenant's), as a scalar subquery. */
const shadowOf = (id: RawBuilder<unknown>) => sql<boolean>`(select w.shadow or t.shadow from workflows w join tenants t on t.id = w.tenant_id where w.id = ${id})`;

export interface DependencyCandidate {
  workflowId: number;
  hasOpenAlert: boolean;
  opens: boolean;
  newestFailure: FailureFacts | null;
}

export interface Blocked {
  workflowId: number;
  /** The upstream incident; `alertId` 0 until the upstream's alert opening in this batch is inserted. */
  incident: UpstreamIncident;
  failure: FailureFacts;
  record: boolean;
}

/**
 * Which of the batch's workflows are held back by an upstream incident:
 * open alerts of their upstreams in the database, or upstreams opening one in
 * this very batch (their alert id is filled in by `recordBlocks`).
 */
export async function findBlocked(trx: Transaction<Database>, candidates: DependencyCandidate[], now: Date): Promise<Blocked[]> {
  const failing = candidates.filter((c) => c.newestFailure && !c.hasOpenAlert);
  if (failing.length === 0) return [];
  const { rows } = await sql<{ workflowId: number; ancestorId: number; alertId: number | null; openedAt: Date | null; lastRunId: number | null; shadow: boolean; ancestorShadow: boolean }>`
    with recursive up(workflow_id, ancestor_id) as (
      select d.workflow_id, d.upstream_id from workflow_dependencies d where d.workflow_id = any(${failing.map((c) => c.workflowId)}::int[])
      union
      select up.workflow_id, d.upstream_id from up join workflow_dependencies d on d.workflow_id = up.ancestor_id
    )
    select up.workflow_id, up.ancestor_id, a.id as alert_id, a.opened_at, b.last_run_id,
      ${shadowOf(sql`up.workflow_id`)} as shadow, ${shadowOf(sql`up.ancestor_id`)} as ancestor_shadow
    from up
    left join alerts a on a.workflow_id = up.ancestor_id and a.status = 'open'
    left join upstream_blocks b on b.upstream_alert_id = a.id and b.workflow_id = up.workflow_id
    where up.ancestor_id <> up.workflow_id
  `.execute(trx);
  const openingHere = new Set(candidates.filter((c) => c.opens).map((c) => c.workflowId));
  const out: Blocked[] = [];
  for (const c of failing) {
    const mine = rows.filter((r) => r.workflowId === c.workflowId);
    const incidents: UpstreamIncident[] = mine.flatMap((r) =>
      r.alertId !== null
        ? [{ alertId: r.alertId, workflowId: r.ancestorId, openedAt: r.openedAt!, shadow: r.ancestorShadow }]
        : openingHere.has(r.ancestorId)
          ? [{ alertId: 0, workflowId: r.ancestorId, openedAt: now, shadow: r.ancestorShadow }]
          : [],
    );
    const incident = blockingIncident(incidents, { shadow: mine[0]?.shadow });
    const blockLastRunId = mine.find((r) => incident && r.alertId === incident.alertId)?.lastRunId ?? null;
    const verdict = dependencyVerdict({ hasOpenAlert: c.hasOpenAlert, incident, newestFailureRunId: c.newestFailure!.runId, blockLastRunId });
    if (verdict.kind === 'blocked') out.push({ workflowId: c.workflowId, incident: verdict.incident, failure: c.newestFailure!, record: verdict.record });
  }
  return out;
}

type EventOf = (alert: Alert, tenant: Pick<Tenant, 'channel'>, kind: EventInput['kind'], data: Record<string, unknown>) => void;

/**
 * Writes the blocks (a new failure counted once, by run id) and tells each
 * upstream alert that gained a downstream the whole list again: the Slack
 * transport edits its one "also affected" reply with it. `opened`: the
 * alerts this batch opened, by workflow id.
 */
export async function recordBlocks(trx: Transaction<Database>, blocked: Blocked[], opened: Map<number, Alert>, now: Date, event: EventOf): Promise<void> {
  const gained = new Set<number>();
  for (const b of blocked) {
    const alertId = b.incident.alertId || opened.get(b.incident.workflowId)?.id;
    if (!alertId || !b.record) continue;
    const missed = b.failure.status === 'missed' ? 1 : 0;
    const since = b.failure.tick ?? now;
    const { rows } = await sql<{ inserted: boolean }>`
      insert into upstream_blocks (upstream_alert_id, workflow_id, since, last_at, failures, missed, last_run_id)
      values (${alertId}, ${b.workflowId}, ${since}, ${now}, ${1 - missed}, ${missed}, ${b.failure.runId})
      on conflict (upstream_alert_id, workflow_id) do update set
        last_at = excluded.last_at, last_run_id = excluded.last_run_id,
        failures = upstream_blocks.failures + excluded.failures, missed = upstream_blocks.missed + excluded.missed
      returning (xmax = 0) as inserted
    `.execute(trx);
    if (rows[0]?.inserted) gained.add(alertId);
  }
  for (const alertId of gained) {
    const { alert, tenant, data } = await affectedList(trx, alertId);
    event(alert, tenant, 'upstream_affected', data);
  }
}

/** The `upstream_affected` data: the upstream tenant's own downstream workflows by name, others only counted (docs/security.md). */
async function affectedList(trx: Transaction<Database>, alertId: number) {
  const alert = await trx.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirstOrThrow();
  const upstream = await trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['tenants.id', 'tenants.channel'])
    .where('workflows.id', '=', alert.workflowId)
    .executeTakeFirstOrThrow();
  const rows = await trx
    .selectFrom('upstreamBlocks as b')
    .innerJoin('workflows as w', 'w.id', 'b.workflowId')
    .select(['w.tenantId', 'w.name', 'b.since', 'b.failures', 'b.missed'])
    .where('b.upstreamAlertId', '=', alertId)
    .orderBy('b.since')
    .orderBy('w.name')
    .execute();
  const own = rows.filter((r) => r.tenantId === upstream.id);
  const told = await trx.selectFrom('alertEvents').select('id').where('alertId', '=', alertId).where('kind', '=', 'upstream_affected').limit(1).executeTakeFirst();
  return {
    alert,
    tenant: { channel: upstream.channel },
    data: {
      upstreamAlertId: alertId,
      affected: own.map((r) => ({ tenant: r.tenantId, workflow: r.name, since: r.since.toISOString(), failures: r.failures, missed: r.missed })),
      otherTenants: rows.length - own.length,
      // Not the first list: Slack edits its reply, other destinations heard the first (destinations.ts).
      ...(told ? { update: true } : {}),
    },
  };
}

/**
 * A downstream alert already open when its upstream's alert opens stays
 * open, linked to the upstream incident (alerts.upstream_alert_id) and told
 * so in its own thread (`upstream_broke`).
 */
export async function linkOpenDownstreams(trx: Transaction<Database>, opened: Map<number, Alert>, now: Date, event: EventOf): Promise<void> {
  if (opened.size === 0) return;
  const upstreams = [...opened.values()];
  const { rows } = await sql<{ upstreamId: number; alertId: number; shadow: boolean; upstreamShadow: boolean }>`
    with recursive down(upstream_id, workflow_id) as (
      select d.upstream_id, d.workflow_id from workflow_dependencies d where d.upstream_id = any(${upstreams.map((a) => a.workflowId)}::int[])
      union
      select down.upstream_id, d.workflow_id from down join workflow_dependencies d on d.upstream_id = down.workflow_id
    )
    select distinct down.upstream_id, a.id as alert_id,
      ${shadowOf(sql`down.workflow_id`)} as shadow, ${shadowOf(sql`down.upstream_id`)} as upstream_shadow
    from down join alerts a on a.workflow_id = down.workflow_id and a.status = 'open' and a.upstream_alert_id is null
    where down.workflow_id <> down.upstream_id
    order by a.id, down.upstream_id
  `.execute(trx);
  // Linked once, to the first upstream (by id) that may hold it: a linked alert is not updated again.
  for (const r of rows) {
    if (!upstreamHolds({ shadow: r.upstreamShadow }, { shadow: r.shadow })) continue;
    const upstreamAlert = opened.get(r.upstreamId)!;
    const linked = await trx.updateTable('alerts').set({ upstreamAlertId: upstreamAlert.id, updatedAt: now }).where('id', '=', r.alertId).where('upstreamAlertId', 'is', null).returningAll().executeTakeFirst();
    if (!linked) continue;
    const names = await upstreamNames(trx, linked.workflowId, upstreamAlert.workflowId);
    event(linked, { channel: names.channel }, 'upstream_broke', { upstreamAlertId: upstreamAlert.id, ...names.upstream });
  }
}

/**
 * How a downstream alert names its upstream: by name in the same tenant; a
 * workflow of another tenant only as such (a tenant's channel is not told
 * another tenant's names).
 */
export async function upstreamNames(trx: Transaction<Database>, downstreamWorkflowId: number, upstreamWorkflowId: number) {
  const rows = await trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['workflows.id', 'workflows.name', 'workflows.tenantId', 'tenants.channel'])
    .where('workflows.id', 'in', [downstreamWorkflowId, upstreamWorkflowId])
    .execute();
  const down = rows.find((r) => r.id === downstreamWorkflowId)!;
  const up = rows.find((r) => r.id === upstreamWorkflowId)!;
  return { channel: down.channel, upstream: up.tenantId === down.tenantId ? { upstreamWorkflow: up.name } : { upstreamOtherTenant: true } };
}

/**
 * The `outlived_upstream` data of a downstream alert opening after the
 * incident `upstreamAlertId` resolved, with how it ended when that was not a
 * recovery (`upstreamEndedBy`: resolved by hand, the upstream disabled or
 * deleted, its tenant disabled), so the thread does not say it recovered.
 */
export async function outlivedData(trx: Transaction<Database>, downstreamWorkflowId: number, upstreamAlertId: number): Promise<Record<string, unknown>> {
  const upstream = await trx.selectFrom('alerts').select(['workflowId', 'resolvedAt']).where('id', '=', upstreamAlertId).executeTakeFirstOrThrow();
  const names = await upstreamNames(trx, downstreamWorkflowId, upstream.workflowId);
  const ending = await trx
    .selectFrom('alertEvents')
    .select(sql<string | null>`data->>'by'`.as('by'))
    .where('alertId', '=', upstreamAlertId)
    .where('kind', '=', 'resolved')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  const endedBy = ending?.by && ending.by !== 'run' ? { upstreamEndedBy: ending.by } : {};
  return { upstreamAlertId, ...names.upstream, upstreamResolvedAt: upstream.resolvedAt?.toISOString() ?? null, ...endedBy };
}
