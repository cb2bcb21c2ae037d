import type { Transaction } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { keyConfiguredNowhere, keyCutOffRefusal, keysCutOff } from '../domain/pagerduty-incident.js';
import { routesFor, type RoutingConfig } from '../ledger/destinations.js';
import { heldPagerKeys, type TenantHeldKey } from '../ledger/held-incidents.js';

/** A tenant's destinations changing: as stored before, as they would be after (secrets resolved). */
export interface DestinationsChange {
  tenantId: string;
  before: unknown;
  after: unknown;
}

/** The PagerDuty keys configured for a tenant's alerts (its own and the platform's, retired ones included), by destination id. */
function pagersOf(destinations: unknown, config: RoutingConfig): string[] {
  return routesFor({ channel: null, destinations, shadow: false }, config).filter((r) => r.kind === 'pagerduty').map((r) => r.id);
}

/**
 * Why each change would be refused (src/domain/pagerduty-incident.ts,
 * `keysCutOff`): a PagerDuty key it removes or changes that holds incidents
 * of the tenant's open alerts. Keyed by tenant id; a tenant missing is fine.
 */
export async function pagerKeyRefusals(trx: Transaction<Database>, changes: readonly DestinationsChange[], config: RoutingConfig): Promise<Map<string, string[]>> {
  const held = await heldPagerKeys(trx, changes.map((c) => c.tenantId));
  const out = new Map<string, string[]>();
  for (const c of changes) {
    const cut = keysCutOff(held.filter((h) => h.tenantId === c.tenantId), pagersOf(c.before, config), pagersOf(c.after, config));
    if (cut.length) out.set(c.tenantId, cut.map(keyCutOffRefusal));
  }
  return out;
}

/**
 * The start's warnings: PagerDuty keys holding incidents of open alerts that
 * are configured nowhere for those alerts' tenants now. Only a key removed
 * from PLATFORM_DESTINATIONS (the environment, read at a restart) can get
 * here: the file sync and the tenants API refuse to remove a tenant's.
 */
export async function pagerKeysConfiguredNowhere(db: Db, config: RoutingConfig): Promise<string[]> {
  const held = await heldPagerKeys(db);
  if (!held.length) return [];
  const tenants = await db.selectFrom('tenants').select(['id', 'destinations']).where('id', 'in', [...new Set(held.map((h) => h.tenantId))]).execute();
  const configured = new Map(tenants.map((t) => [t.id, pagersOf(t.destinations, config)]));
  const gone = held.filter((h) => !(configured.get(h.tenantId) ?? []).includes(h.destination));
  const byKey = new Map<string, TenantHeldKey[]>();
  for (const h of gone) byKey.set(h.destination, [...(byKey.get(h.destination) ?? []), h]);
  return [...byKey.values()].map((hs) => {
    const whose = hs.some((h) => h.configuredBy === 'platform') ? 'PLATFORM_DESTINATIONS' : 'a tenant\'s';
    return keyConfiguredNowhere({ destination: hs[0]!.destination, openAlerts: hs.reduce((n, h) => n + h.openAlerts, 0) }, whose, hs.map((h) => h.tenantId));
  });
}
