import type { DestinationSpec } from '../../config/workflows-file.js';
import type { Db } from '../../db/connect.js';
import { shownDestination } from '../../domain/destination-outage.js';
import type { IncidentAudience } from '../../domain/pagerduty-incident.js';
import { platformOnlyDestinations, routesFor, type RoutingConfig } from '../../ledger/destinations.js';
import type { DeliveryInput, DeliveryResult } from '../transport.js';

/**
 * The configuration of the destination a row was written for, looked up by
 * its id among the tenant's and the platform's destinations as they are now.
 * Secrets live only in configuration, never in the outbox row.
 */
export function destinationSpecFor<K extends DestinationSpec['kind']>(
  input: Pick<DeliveryInput, 'notification' | 'tenant'>,
  config: RoutingConfig,
  kind: K,
): Extract<DestinationSpec, { kind: K }> | DeliveryResult {
  const id = input.notification.destination;
  const route = routesFor({ channel: null, destinations: input.tenant.destinations }, config).find((r) => r.id === id || isLegacyWebhookId(id, r.spec));
  if (!route?.spec || route.spec.kind !== kind) {
    // Removed from the configuration after the row was written (or its URL changed): nothing to deliver with,
    // and retrying will not change that. Never a guess at another URL on the same host.
    return { kind: 'permanent', error: `destination ${shownDestination(id)} is no longer configured for tenant ${input.tenant.id}`, expected: true };
  }
  return route.spec as Extract<DestinationSpec, { kind: K }>;
}

/**
 * A row written as `webhook:<URL>` by a replica still running the version
 * before migration 0019 (a rolling upgrade): delivered to the configured
 * webhook with exactly that URL, so nothing pending is lost by the upgrade.
 */
function isLegacyWebhookId(id: string, spec: DestinationSpec | undefined): boolean {
  return spec?.kind === 'webhook' && id === `webhook:${spec.url}`;
}

/**
 * Who reads what is sent to the row's destination: the platform (its channel,
 * PLATFORM_DESTINATIONS the tenant does not list itself) or the tenant.
 */
export function audienceOf(input: Pick<DeliveryInput, 'notification' | 'tenant'>, config: RoutingConfig): IncidentAudience {
  return platformOnlyDestinations(input.tenant, config).has(input.notification.destination) ? 'platform' : 'tenant';
}

export function isResult(v: unknown): v is DeliveryResult {
  return typeof v === 'object' && v !== null && 'kind' in v && ['sent', 'rate_limited', 'permanent', 'transient', 'unknown'].includes((v as { kind: string }).kind);
}

export interface ThreadRoot {
  notificationId: number;
  idempotencyKey: string;
  eventId: number;
  eventAt: Date;
}

/**
 * The first row this destination got for this alert (skipped ones never went
 * out). Rows of one (alert, destination) are delivered strictly in id order,
 * so when a later row is being delivered its root has already been tried.
 */
export async function threadRootOf(db: Db, alertId: number, destination: string): Promise<ThreadRoot | undefined> {
  const row = await db
    .selectFrom('notifications as n')
    .innerJoin('alertEvents as e', 'e.id', 'n.eventId')
    .select(['n.id', 'n.idempotencyKey', 'n.eventId', 'e.at'])
    .where('n.alertId', '=', alertId)
    .where('n.destination', '=', destination)
    .where('n.status', '!=', 'skipped')
    .orderBy('n.id')
    .limit(1)
    .executeTakeFirst();
  return row ? { notificationId: row.id, idempotencyKey: row.idempotencyKey, eventId: row.eventId, eventAt: row.at } : undefined;
}

