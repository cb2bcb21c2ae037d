import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * Held back across tenants (docs/alerts.md, dependencies): a downstream
 * workflow whose failures are held back by an upstream incident of ANOTHER
 * tenant is told so in its own tenant's channel, once per block (upstream
 * alert × downstream workflow, `upstream_blocks`), and told again when that
 * incident ends. Same-tenant blocks need no note: the upstream's thread, in
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
  /** The block's key; the upstream alert's id is another tenant's and is never shown. */
  upstreamAlertId: number;
  workflowId: number;
  tenantId: string;
  workflow: string;
  channel: string | null;
  /** The downstream (or its tenant) is in shadow: told to the platform channel only, marked. */
  shadow: boolean;
  /**
   * False: a released note of a downstream disabled or removed since, or of a disabled tenant (whose channel may
   * be another tenant's now): marked told, posted nowhere, so it does not wait for ever.
   */
  told: boolean;
  since: Date;
  failures: number;
  missed: number;
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

/**
 * Claims one note due now and marks it told (`held_noted_at`, or
 * `released_noted_at`), SKIP LOCKED, so replicas post it once: a held note
 * while the upstream alert is open and none was told for the block; a
 * released note once that alert is no longer open, for a block whose held note
 * was told. Only an enabled downstream of an enabled tenant is told; a
 * released note due to any other is closed untold (`told: false`). Null:
 * nothing due.
 */
export async function claimHeldBackNote(db: Db, now: Date): Promise<HeldBackNote | null> {
  const { rows } = await sql<HeldBackNote>`
    with due as (${HELD_BACK_NOTES_DUE}), claimed as (
      select b.upstream_alert_id, b.workflow_id, d.kind
      from due d
      join upstream_blocks b on b.upstream_alert_id = d.upstream_alert_id and b.workflow_id = d.workflow_id
      join alerts ua on ua.id = b.upstream_alert_id
      join workflows uw on uw.id = ua.workflow_id
      join workflows w on w.id = b.workflow_id
      join tenants t on t.id = w.tenant_id
      where uw.tenant_id <> w.tenant_id and ((w.enabled and t.enabled) or d.kind = 'released')
      order by b.since, b.workflow_id, b.upstream_alert_id
      limit 1
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
  return rows[0] ?? null;
}

/** Gives a claim back (a post Slack may take later: rate limited, a transient error), so the next look posts it. */
export async function unclaimHeldBackNote(db: Db, note: Pick<HeldBackNote, 'kind' | 'upstreamAlertId' | 'workflowId'>): Promise<void> {
  await db
    .updateTable('upstreamBlocks')
    .set(note.kind === 'held' ? { heldNotedAt: null } : { releasedNotedAt: null })
    .where('upstreamAlertId', '=', note.upstreamAlertId)
    .where('workflowId', '=', note.workflowId)
    .execute();
}
