import { sql, type Transaction } from 'kysely';
import type { Config } from '../config/env.js';
import type { Alert, AlertEvent, Database, Tenant } from '../db/schema.js';
import { isNotifiedKind, notificationKey, QUIET_EVENT_KINDS, type AlertEventKind } from '../domain/events.js';
import { silenceState, summariseHeld, type HeldSummary } from '../domain/silence.js';
import { destinationsFor } from '../engine/destinations.js';

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
  config: Pick<Config, 'PLATFORM_CHANNEL'>;
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
  const destinations = destinationsFor(input.tenant, input.config);
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
