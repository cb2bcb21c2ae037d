import { sql, type Transaction } from 'kysely';
import type { Alert, AlertEvent, Database, Tenant } from '../db/schema.js';
import { isNotifiedKind, notificationKey, QUIET_EVENT_KINDS, type AlertEventKind } from '../domain/events.js';
import { silenceState, summariseHeld, type HeldSummary } from '../domain/silence.js';
import { routesFor, shouldRoute, type RoutingConfig } from '../engine/destinations.js';

export const NOTIFICATIONS_CHANNEL = 'scheduler_notifications';

/** Always delivered, even while the alert is silenced. */
const NEVER_HELD: readonly string[] = ['silenced', 'unsilenced', 'resolved'];

export interface EventInput {
  /** The alert as it stands after the change this event records. */
  alert: Alert;
  tenant: Pick<Tenant, 'channel'>;
  kind: AlertEventKind;
  actor?: string | null;
  data: Record<string, unknown>;
  now: Date;
  /** PLATFORM_DESTINATIONS is optional so callers that only know the platform channel keep working. */
  config: RoutingConfig;
}

/**
 * Records one alert event and, in the same transaction, its outbox rows: one
 * per destination for a notified kind, and quiet ones (data.quiet = true; the
 * root is re-rendered, no reply) for failure_recorded / healthy_streak. While
 * the alert is silenced rows are written `held`. Wakes the senders via NOTIFY,
 * which Postgres delivers only at commit.
 */
export async function recordAlertEvent(trx: Transaction<Database>, input: EventInput): Promise<AlertEvent> {
  const quiet = (QUIET_EVENT_KINDS as readonly string[]).includes(input.kind);
  const data = quiet ? { ...input.data, quiet: true } : input.data;
  const event = await trx
    .insertInto('alertEvents')
    .values({ alertId: input.alert.id, at: input.now, kind: input.kind, actor: input.actor ?? null, data: JSON.stringify(data) })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (!quiet && !isNotifiedKind(input.kind)) return event;
  const destinations = await routeEvent(trx, input);
  if (destinations.length === 0) return event;
  const held = silenceState(input.alert, input.now).silenced && !NEVER_HELD.includes(input.kind);
  await trx
    .insertInto('notifications')
    .values(
      destinations.map((destination) => ({
        alertId: input.alert.id,
        eventId: event.id,
        destination,
        idempotencyKey: notificationKey(input.alert.id, event.id, destination),
        status: held ? ('held' as const) : ('pending' as const),
        nextAttemptAt: input.now,
        leaseOwner: null,
        leaseExpiresAt: null,
        result: null,
        lastError: null,
        createdAt: input.now,
        sentAt: null,
      })),
    )
    .execute();
  if (!held) await sql`select pg_notify(${NOTIFICATIONS_CHANNEL}, ${String(input.alert.id)})`.execute(trx);
  return event;
}

/**
 * The destinations this event goes to under each one's routing rules. The
 * tenant's configured destinations are read here, in the event's transaction,
 * so every caller routes the same way whatever part of the tenant it loaded.
 * "Heard" is decided from the outbox itself: a destination with a row for
 * this alert that was not skipped has been told the alert exists.
 */
async function routeEvent(trx: Transaction<Database>, input: EventInput): Promise<string[]> {
  const stored = await trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['tenants.destinations'])
    .where('workflows.id', '=', input.alert.workflowId)
    .executeTakeFirst();
  const routes = routesFor({ channel: input.tenant.channel, destinations: stored?.destinations }, input.config);
  if (routes.length === 0) return [];
  const heardRows = await trx
    .selectFrom('notifications')
    .select('destination')
    .distinct()
    .where('alertId', '=', input.alert.id)
    .where('status', '!=', 'skipped')
    .execute();
  const heard = new Set(heardRows.map((r) => r.destination));
  return routes.filter((r) => shouldRoute(r, input.kind, input.alert.severity, heard.has(r.id))).map((r) => r.id);
}

/**
 * Ends the hold on an alert's notifications: held rows become `skipped` and
 * the summary of what they said is returned, for the one event that replaces them.
 */
export async function releaseHeldNotifications(trx: Transaction<Database>, alert: Alert): Promise<HeldSummary> {
  const rows = await trx
    .updateTable('notifications')
    .set({ status: 'skipped' })
    .where('alertId', '=', alert.id)
    .where('status', '=', 'held')
    .returning(['eventId'])
    .execute();
  const eventIds = [...new Set(rows.map((r) => r.eventId))];
  const events = eventIds.length ? await trx.selectFrom('alertEvents').select(['kind']).where('id', 'in', eventIds).execute() : [];
  return summariseHeld(
    events.map((e) => e.kind),
    alert,
  );
}
