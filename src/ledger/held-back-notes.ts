import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * Held back across tenants (docs/alerts.md, dependencies): a downstream
 * workflow whose failures are held back by an upstream incident of ANOTHER
 * tenant is told so in its own tenant's channel, once per block (upstream
 * alert × downstream workflow, `upstream_blocks`), the blocks of one incident
 * due at once in one note, and told again when that incident ends. Same-tenant blocks need no note: the upstream's thread, in
 * the same channel, names them ("Also affected: …").
 *
 * What crosses the trust boundary (docs/security.md): the downstream's own
 * name and counts, and that "another tenant's workflow" it depends on is
 * failing; never the upstream's name, tenant, error, owner or thread. A
 * tenant does not write cross-tenant `dependsOn` entries (the operator does)
 * and its own views never name them, so the note does not either.
 */
export interface HeldBackNote {
  kind: 'held' | 'released';
  /** The blocks' upstream alert: another tenant's, never shown. */
  upstreamAlertId: number;
  tenantId: string;
  channel: string | null;
  /** The downstreams (or their tenant) are in shadow: told to the platform channel only, marked. */
  shadow: boolean;
  /**
   * False: a released note of downstreams disabled or removed since, or of a disabled tenant (whose channel may
   * be another tenant's now): marked told, posted nowhere, so it does not wait for ever.
   */
  told: boolean;
  /** The downstream workflows the note is about, the longest held back first: one note however many. */
  workflows: { workflowId: number; name: string; since: Date; failures: number; missed: number }[];
}

/**
 * The blocks across tenants with a note due: held while the upstream alert is
 * open and none was told; released once it is not (a told block is one across
 * tenants). The claim below takes from these; the replay asks whether any is.
 */
export const HELD_BACK_NOTES_DUE = sql`
  select b.upstream_alert_id, b.workflow_id, 'held' as kind
  from alerts ua join upstream_blocks b on b.upstream_alert_id = ua.id
  join workflows uw on uw.id = ua.workflow_id join workflows dw on dw.id = b.workflow_id
  where ua.status = 'open' and b.held_noted_at is null and uw.tenant_id <> dw.tenant_id
  union all
  select b.upstream_alert_id, b.workflow_id, 'released'
  from upstream_blocks b join alerts ua on ua.id = b.upstream_alert_id
  where b.held_noted_at is not null and b.released_noted_at is null and ua.status <> 'open'`;

type ClaimedRow = Omit<HeldBackNote, 'workflows'> & { workflowId: number; workflow: string; since: Date; failures: number; missed: number };

/**
 * Claims one note due now and marks its blocks told (`held_noted_at`, or
 * `released_noted_at`), SKIP LOCKED, so replicas post it once: the due blocks
 * of one upstream incident for one tenant's channel, so a shared warehouse
 * failing tells a tenant with twelve downstreams once, naming the twelve, not
 * in twelve messages. Only enabled downstreams of an enabled tenant are told;
 * a released note due to any other is closed untold (`told: false`). Null:
 * nothing due.
 */
export async function claimHeldBackNote(db: Db, now: Date): Promise<HeldBackNote | null> {
  const { rows } = await sql<ClaimedRow>`
    with due as (${HELD_BACK_NOTES_DUE}), candidates as (
      select d.upstream_alert_id, d.workflow_id, d.kind, w.tenant_id, (w.shadow or t.shadow) as shadow, (w.enabled and t.enabled) as told, b.since
      from due d
      join upstream_blocks b on b.upstream_alert_id = d.upstream_alert_id and b.workflow_id = d.workflow_id
      join workflows w on w.id = b.workflow_id
      join tenants t on t.id = w.tenant_id
      where (w.enabled and t.enabled) or d.kind = 'released'
    ), first as (
      select upstream_alert_id, kind, tenant_id, shadow, told from candidates order by since, workflow_id, upstream_alert_id limit 1
    ), claimed as (
      select b.upstream_alert_id, b.workflow_id, c.kind
      from candidates c
      join first f on f.upstream_alert_id = c.upstream_alert_id and f.kind = c.kind and f.tenant_id = c.tenant_id and f.shadow = c.shadow and f.told = c.told
      join upstream_blocks b on b.upstream_alert_id = c.upstream_alert_id and b.workflow_id = c.workflow_id
      -- Looked at again on the row locked: another replica's claim committed meanwhile is not taken twice.
      where (c.kind = 'held' and b.held_noted_at is null) or (c.kind = 'released' and b.held_noted_at is not null and b.released_noted_at is null)
      for update of b skip locked
    )
    update upstream_blocks b set
      held_noted_at = coalesce(b.held_noted_at, ${now}),
      released_noted_at = case when c.kind = 'released' then ${now}::timestamptz else b.released_noted_at end
    from claimed c, workflows w, tenants t
    where b.upstream_alert_id = c.upstream_alert_id and b.workflow_id = c.workflow_id and w.id = b.workflow_id and t.id = w.tenant_id
    returning c.kind, b.upstream_alert_id, b.workflow_id, t.id as tenant_id, w.name as workflow, t.channel,
      (w.shadow or t.shadow) as shadow, (w.enabled and t.enabled) as told, b.since, b.failures, b.missed
  `.execute(db);
  const head = rows[0];
  if (!head) return null;
  const workflows = rows
    .map((r) => ({ workflowId: Number(r.workflowId), name: r.workflow, since: r.since, failures: r.failures, missed: r.missed }))
    .sort((a, b) => a.since.getTime() - b.since.getTime() || a.workflowId - b.workflowId);
  return { kind: head.kind, upstreamAlertId: Number(head.upstreamAlertId), tenantId: head.tenantId, channel: head.channel, shadow: head.shadow, told: head.told, workflows };
}

/** Gives a claim back (a post Slack may take later: rate limited, a transient error), so the next look posts it. */
export async function unclaimHeldBackNote(db: Db, note: Pick<HeldBackNote, 'kind' | 'upstreamAlertId' | 'workflows'>): Promise<void> {
  await db
    .updateTable('upstreamBlocks')
    .set(note.kind === 'held' ? { heldNotedAt: null } : { releasedNotedAt: null })
    .where('upstreamAlertId', '=', note.upstreamAlertId)
    .where(
      'workflowId',
      'in',
      note.workflows.map((w) => w.workflowId),
    )
    .execute();
}
