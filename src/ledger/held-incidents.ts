import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import type { HeldKey } from '../domain/pagerduty-incident.js';

/** A PagerDuty key holding incidents of one tenant's open alerts, and whose key it was when the triggers went. */
export interface TenantHeldKey extends HeldKey {
  tenantId: string;
  /** `platform` when any of those triggers went on the platform's key (PLATFORM_DESTINATIONS), or before this was recorded. */
  configuredBy: 'tenant' | 'platform';
}

/**
 * The PagerDuty keys (destination ids) holding incidents of open alerts, per
 * tenant: a trigger to `pagerduty:<digest>` settled `sent` with its
 * dedup_key, for an alert not resolved. Every tenant, or `tenantIds`' only.
 * Read in the caller's transaction, before it changes the tenants' destinations.
 */
export async function heldPagerKeys(db: Kysely<Database> | Transaction<Database>, tenantIds?: readonly string[]): Promise<TenantHeldKey[]> {
  if (tenantIds && tenantIds.length === 0) return [];
  const rows = await db
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .innerJoin('notifications', 'notifications.alertId', 'alerts.id')
    .select([
      'workflows.tenantId',
      'notifications.destination',
      sql<string>`count(distinct alerts.id)`.as('openAlerts'),
      sql<boolean>`bool_or(coalesce(notifications.result->>'configuredBy', 'platform') = 'platform')`.as('platform'),
    ])
    .where('alerts.status', '=', 'open')
    .where('notifications.status', '=', 'sent')
    .where('notifications.destination', 'like', 'pagerduty:%')
    .where(sql<boolean>`notifications.result ? 'dedupKey'`)
    .$if(!!tenantIds, (q) => q.where('workflows.tenantId', 'in', tenantIds!))
    .groupBy(['workflows.tenantId', 'notifications.destination'])
    .orderBy('notifications.destination')
    .orderBy('workflows.tenantId')
    .execute();
  return rows.map((r) => ({ tenantId: r.tenantId, destination: r.destination, openAlerts: Number(r.openAlerts), configuredBy: r.platform ? 'platform' : 'tenant' }));
}
