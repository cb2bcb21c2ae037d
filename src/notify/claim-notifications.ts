import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Notification, NotificationStatus } from '../db/schema.js';
import { DELIVERY_INPUT_COLUMNS, deliveryInputOf, type DeliveryInputColumns } from './delivery-input.js';
import type { DeliveryInput } from './transport.js';
import { prepared } from '../db/prepared.js';

export interface ClaimedNotification {
  id: number;
  destination: string;
  /** `sending` means an earlier attempt may have been delivered: its outcome is unknown. */
  previousStatus: NotificationStatus;
  /** The row as claimed (status `sending`, leased to the claimer). */
  row: Notification;
  /** Pending rows for the same alert and destination queued behind this one (lets a transport coalesce). */
  queuedBehind: number;
  /** What the transport is handed (the sender adds its `now` and `keepLease`), read by the claim itself. */
  input: Omit<DeliveryInput, 'now' | 'keepLease'>;
}

export interface ClaimOptions {
  now: Date;
  owner: string;
  leaseMs: number;
  limit: number;
  /** Destination kinds this process has a transport for (`slack`…); other rows wait for their sender. */
  kinds: string[];
  /** Destinations held back by pacing or a rate limit right now, or already being sent to by this replica. */
  exclude: string[];
  /** Only these destinations (a destination's next row, claimed as soon as its previous one settled). */
  only?: string[];
  /**
   * Each destination's tenant this sender last delivered a row of there.
   * Such a destination's head is the oldest of the next tenant's after that
   * one (tenant ids in order, round and round), so tenants sharing a
   * destination take turns; a destination without one starts with its oldest.
   */
  turns?: ReadonlyMap<string, string>;
}

/**
 * Claims due notifications: at most one per destination per call (pacing is
 * per destination, so a second one could not go out before the next call
 * anyway), and only the head of each (alert, destination) queue, so a thread's
 * messages go out in event order. Rows are marked `sending` under a lease;
 * a replica that dies mid-send leaves a `sending` row whose lease runs out,
 * and the next claimer treats its outcome as unknown.
 *
 * Within a destination the oldest due row of the tenant whose turn it is
 * goes first, whatever its retry history: a destination that failed is held
 * as a whole (`destination_outages`), so when it recovers its rows leave in
 * the order they were written, tenant by tenant in turn (`turns`). Tenants
 * sharing a destination (the platform channel) take turns so that one
 * tenant's storm there does not hold back another's alert behind its whole
 * backlog. That reorders only rows of different tenants,
 * so of different alerts: each alert's rows still go in event order (the
 * head of its queue is the only one claimable), and each tenant's rows in
 * the order written (an upstream's opening before its downstream's reply
 * that links to it, in one tenant). Across tenants only a dependency on
 * another tenant's workflow links two alerts' rows: a downstream's reply
 * that goes in its tenant's turn before the upstream's root is posted there
 * goes without the link (src/slack/transport/upstream-replies.ts: "when it
 * has one"). A storm's members, of any tenant, are folded into the one
 * message whichever comes first. A
 * `<kind>:*` row (the Slack workspace whose token is refused) holds every
 * destination of the kind until a probe of the credentials ends it
 * (src/notify/credential-probe.ts), whatever its `held_until`.
 *
 * DISTINCT ON cannot be combined with FOR UPDATE, so the heads are picked
 * first and then locked with SKIP LOCKED, rechecking what may have changed.
 */
export async function claimNotifications(db: Db, o: ClaimOptions): Promise<ClaimedNotification[]> {
  if (o.kinds.length === 0) return [];
  const leaseUntil = new Date(o.now.getTime() + o.leaseMs);
  const turns = o.turns ?? new Map<string, string>();
  // Prepared (two texts, with and without `only`): its planning took longer than its execution.
  const result = await sql<Notification & DeliveryInputColumns & { previousStatus: NotificationStatus; queuedBehind: number }>`${prepared}
    with heads as (
      select distinct on (n.destination) n.id
      from notifications n
      left join unnest(${[...turns.keys()]}::text[], ${[...turns.values()]}::text[]) as turn(destination, tenant_id) on turn.destination = n.destination
      -- The row's tenant, looked up only where a turn is kept.
      left join lateral (
        select w.tenant_id from alerts a join workflows w on w.id = a.workflow_id where a.id = n.alert_id and turn.tenant_id is not null
      ) rt on true
      where n.status in ('pending', 'sending')
        and n.next_attempt_at <= ${o.now}
        and (n.lease_expires_at is null or n.lease_expires_at <= ${o.now})
        and split_part(n.destination, ':', 1) = any(${o.kinds}::text[])
        and n.destination <> all(${o.exclude}::text[])
        ${o.only ? sql`and n.destination = any(${o.only}::text[])` : sql``}
        and not exists (
          select 1 from destination_outages h
          where (h.destination = n.destination and h.held_until > ${o.now})
            or h.destination = split_part(n.destination, ':', 1) || ':*'
        )
        and not exists (
          select 1 from notifications p
          where p.alert_id = n.alert_id and p.destination = n.destination and p.id < n.id
            and p.status in ('pending', 'sending')
        )
      -- The tenants after the last one served first (in id order), then the rest from the first: a round.
      order by n.destination, case when rt.tenant_id > turn.tenant_id then 0 else 1 end, rt.tenant_id, n.id
    ),
    locked as (
      select n.id, n.status as previous_status
      from notifications n
      join heads using (id)
      where n.status in ('pending', 'sending')
        and (n.lease_expires_at is null or n.lease_expires_at <= ${o.now})
      order by n.next_attempt_at, n.id
      limit ${o.limit}
      for update of n skip locked
    )
    update notifications
    set status = 'sending', lease_owner = ${o.owner}, lease_expires_at = ${leaseUntil}
    from locked
    where notifications.id = locked.id
    returning notifications.*, locked.previous_status,
      (select count(*) from notifications b
        where b.alert_id = notifications.alert_id and b.destination = notifications.destination and b.id > notifications.id
          and b.status in ('pending', 'sending'))::int as queued_behind,
      ${DELIVERY_INPUT_COLUMNS}
  `.execute(db);
  // Raw SQL results pass through the CamelCasePlugin: snake_case columns arrive camelCased.
  return result.rows.map(({ previousStatus, queuedBehind, eventRow, alertRow, workflowRow, tenantRow, lastRunRow, ...row }) => ({
    id: row.id,
    destination: row.destination,
    previousStatus,
    row,
    queuedBehind,
    input: deliveryInputOf(row, { eventRow, alertRow, workflowRow, tenantRow, lastRunRow }, queuedBehind),
  }));
}

/**
 * Renews a claimed row's lease (to `until`) if it is still this owner's and
 * still `sending`: true when it was. A sender that stalled past its lease
 * (a database stall, a long lookup) may have had the row claimed, or even
 * sent and settled, by another replica meanwhile; one conditional statement
 * right before a send tells it so, and it sends nothing.
 */
export async function renewLease(db: Db, row: { id: number; owner: string }, until: Date): Promise<boolean> {
  const renewed = await db
    .updateTable('notifications')
    .set({ leaseExpiresAt: until })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', row.owner)
    .returning('id')
    .executeTakeFirst();
  return renewed !== undefined;
}
