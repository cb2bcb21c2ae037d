import { createHmac } from 'node:crypto';

/**
 * PagerDuty incidents: which one an alert's events name (the `dedup_key`) and
 * which incidents a change of configuration has cut off. Pure: values in, a
 * value out.
 */

/**
 * The installation's tag: 12 hex digits of HMAC-SHA256, under the database's
 * random destination id key (instance_keys, migration 0019), of a fixed
 * label. Stable for as long as the database, different between two databases
 * (two installations sharing one routing key), and the key cannot be worked
 * back from it.
 */
export function installationOf(destinationIdKey: string): string {
  return createHmac('sha256', destinationIdKey).update('pagerduty-dedup-key').digest('hex').slice(0, 12);
}

/**
 * The dedup_key a new incident is triggered with: the installation and the
 * alert. Without an installation (an older version's trigger) it was
 * `scheduler-bot:alert:<id>`, which collides across installations.
 */
export function dedupKeyFor(alertId: number, installation: string | undefined): string {
  return installation ? `scheduler-bot:${installation}:alert:${alertId}` : `scheduler-bot:alert:${alertId}`;
}

/**
 * The dedup_key an event of the alert names at one routing key: the one its
 * incident there was triggered with, when a trigger went (an incident opened
 * before the upgrade keeps its key to the end, or it would never resolve),
 * else a new incident's.
 */
export function incidentDedupKey(alertId: number, installation: string | undefined, triggeredWith: unknown): string {
  return typeof triggeredWith === 'string' && triggeredWith.startsWith('scheduler-bot:') ? triggeredWith : dedupKeyFor(alertId, installation);
}

/** A PagerDuty incident an alert's resolve cannot reach: its routing key is configured nowhere any more. */
export interface UnresolvedIncident {
  /** `pagerduty:<12 hex digits of the key's SHA-256>`: names the key, never holds it. */
  destination: string;
  dedupKey: string;
  /**
   * Whose routing key it was when its trigger went: the tenant's own, or the
   * platform's (PLATFORM_DESTINATIONS). Unknown for an incident triggered
   * before this was recorded, which is taken as the platform's.
   */
  configuredBy?: 'tenant' | 'platform';
}

/** Who reads an event's words: the tenant's channel and destinations, or the platform's (its channel, PLATFORM_DESTINATIONS). */
export type IncidentAudience = 'tenant' | 'platform';

/**
 * What an audience is told of the incidents a resolve cannot reach: the
 * platform every one, by dedup_key and key id; a tenant its own keys' the
 * same way, and only how many of the platform's stay open (tenants are
 * untrusted: never the platform's key id or its incident's key).
 */
export function incidentsToldTo(audience: IncidentAudience, list: readonly UnresolvedIncident[]): { named: UnresolvedIncident[]; platformOnes: number } {
  if (audience === 'platform') return { named: [...list], platformOnes: 0 };
  const named = list.filter((i) => i.configuredBy === 'tenant');
  return { named, platformOnes: list.length - named.length };
}

/**
 * An event's data as an audience may read it raw (a webhook's `data`, the
 * API's timeline): for a tenant, the platform's incidents left open are
 * reduced to their count (`platformIncidentsOpen`). Other data unchanged.
 */
export function eventDataFor(audience: IncidentAudience, data: unknown): unknown {
  if (audience === 'platform' || !data || typeof data !== 'object' || !Array.isArray((data as { unresolvedIncidents?: unknown }).unresolvedIncidents)) return data;
  const { unresolvedIncidents: list, ...rest } = data as { unresolvedIncidents: UnresolvedIncident[] };
  const { named, platformOnes } = incidentsToldTo('tenant', list.filter((i) => !!i && typeof i === 'object'));
  return { ...rest, ...(named.length > 0 ? { unresolvedIncidents: named } : {}), ...(platformOnes > 0 ? { platformIncidentsOpen: platformOnes } : {}) };
}

/**
 * The PagerDuty destinations that have heard an alert (`heard`, with the
 * dedup_key each was triggered with) and are no longer among the routes
 * configured now (`configured`, retired keys included): the routing key
 * changed or was removed while the incident was open. Their resolve is not
 * sent to any other key (a dedup_key is per service: another service has no
 * such incident, or another installation's); the thread says which incident
 * stays open, for a person to resolve in PagerDuty.
 */
export function unresolvedIncidents(heard: readonly UnresolvedIncident[], configured: readonly string[]): UnresolvedIncident[] {
  const seen = new Set<string>();
  return heard.filter((h) => h.destination.startsWith('pagerduty:') && !configured.includes(h.destination) && !seen.has(h.destination) && seen.add(h.destination));
}

/**
 * Whether a PagerDuty key that has not heard of an alert may open an incident
 * for it now (at an event that opens one there: the alert opening, going
 * live, escalating to the key's severity). PagerDuty deduplicates per
 * integration key: the same dedup_key sent to a second key opens a second
 * incident, even on the same service. So a key added while the alert is open
 * beside a retired key that holds the alert's incident (`retiredHoldsIncident`)
 * opens none: that is a rotation, the new key the retired one's replacement,
 * and the alert's escalation, acknowledge and resolve go to its incident on
 * the retired key. A key configured when the alert opened (`pagersAtOpening`:
 * a critical-only pager a warning did not reach) opens its incident at the
 * escalation, and so does a key added with none retired holding the alert
 * (a new destination: one incident per key). An alert opened before the keys
 * were recorded (undefined or null) is routed as before: every key may.
 */
export function opensIncident(destination: string, pagersAtOpening: readonly string[] | null | undefined, retiredHoldsIncident: boolean): boolean {
  return !retiredHoldsIncident || !pagersAtOpening || pagersAtOpening.includes(destination);
}

/** A PagerDuty key (its destination id) holding the incidents of open alerts: alerts whose trigger was sent there. */
export interface HeldKey {
  destination: string;
  openAlerts: number;
}

/**
 * The keys a change of configuration would cut off from the incidents they
 * hold: configured before the change (`before`, retired ones included, the
 * platform's too), configured nowhere after it (`after`). A changed routing
 * key is another destination, so a change is a removal. Their open alerts'
 * resolve could never reach their incidents, and an escalation would open a
 * second one on the key that replaced them: the file sync and the tenants
 * API refuse the change (`keyCutOffRefusal`). A key already gone before the
 * change (a PLATFORM_DESTINATIONS key removed at a restart) is not this
 * change's doing: the start warns of those (`keyConfiguredNowhere`).
 */
export function keysCutOff(held: readonly HeldKey[], before: readonly string[], after: readonly string[]): HeldKey[] {
  return held.filter((h) => before.includes(h.destination) && !after.includes(h.destination));
}

const openAlerts = (n: number) => `${n} open alert${n === 1 ? '' : 's'}`;

/** Why a change is refused: the key named by its id (a digest; the key is a secret), the count, and what to do instead. */
export function keyCutOffRefusal(k: HeldKey): string {
  return `PagerDuty destination ${k.destination} holds the incidents of ${openAlerts(k.openAlerts)}: removing or changing its routing key would leave them open in PagerDuty, and page again on a new key. Keep it listed with "retired": true until they resolve (or resolve them), then remove it`;
}

/** The start's warning of a key configured nowhere that still holds incidents (`whose`: where it was configured; `tenants`: whose alerts). */
export function keyConfiguredNowhere(k: HeldKey, whose: string, tenants: readonly string[]): string {
  return `PagerDuty destination ${k.destination} (${whose}) holds the incidents of ${openAlerts(k.openAlerts)} (tenant ${tenants.join(', ')}) and is configured nowhere now: their escalation opens a second incident on any new key and their resolve cannot reach them. Put it back with "retired": true until they resolve (or resolve them in PagerDuty)`;
}
