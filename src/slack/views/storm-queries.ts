import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Storm } from '../../db/schema.js';
import { inShadow, IN_SHADOW_SQL } from '../../domain/shadow.js';
import { silenceState } from '../../domain/silence.js';
import { stormMembers } from '../../ledger/storm-members.js';
import type { StormView } from '../blocks/storm-message.js';

/** The storm that took in this alert's opening in this channel, if one did. */
export async function stormOf(db: Db, alertId: number, destination: string): Promise<Storm | undefined> {
  return db
    .selectFrom('stormAlerts')
    .innerJoin('storms', 'storms.id', 'stormAlerts.stormId')
    .selectAll('storms')
    .where('stormAlerts.alertId', '=', alertId)
    .where('stormAlerts.destination', '=', destination)
    .executeTakeFirst();
}

/** The pages (their events' data) posted in a storm's thread since `since`: a later page of the same people folds into the message. */
export async function recentStormPages(db: Db, stormId: number, destination: string, since: Date): Promise<{ at: Date; data: unknown }[]> {
  const rows = await db
    .selectFrom('notifications')
    .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
    .select(['notifications.sentAt', 'alertEvents.data'])
    .where('notifications.destination', '=', destination)
    .where('notifications.status', '=', 'sent')
    .where('notifications.sentAt', '>=', since)
    .where(sql<boolean>`notifications.result->>'storm' = ${String(stormId)} and notifications.result ? 'threadTs'`)
    .execute();
  return rows.map((r) => ({ at: r.sentAt!, data: r.data }));
}

/** A storm and every alert it took in, as the storm message shows them now. */
export async function loadStormView(db: Db, stormId: number, now: Date): Promise<(StormView & { eventId: number }) | undefined> {
  // Read before the members (as loadAlertCard does): the state rendered is at least as new as the id recorded for it.
  const latest = await db
    .selectFrom('alertEvents')
    .select((eb) => eb.fn.max('alertEvents.id').as('id'))
    .where('alertId', 'in', (eb) => eb.selectFrom('stormAlerts').select('alertId').where('stormId', '=', stormId))
    .executeTakeFirst();
  const storm = await db.selectFrom('storms').selectAll().where('id', '=', stormId).executeTakeFirst();
  if (!storm) return undefined;
  const rows = await stormMembers(db, stormId)
    .select(['a.id', 'a.status', 'a.severity', 'a.consecutiveFailures', 'a.ownerUser', 'a.silencedBy', 'a.silencedUntil', 'a.silenceReason', 'a.lastError', 'w.name as workflow', 't.id as tenantId', 't.name as tenantName', 't.channel as tenantChannel', 'w.shadow as workflowShadow', 't.shadow as tenantShadow', 'th.rootTs'])
    .orderBy('a.id')
    .execute();
  return {
    eventId: Number(latest?.id ?? 0),
    storm: { id: Number(storm.id), channel: storm.channel, startedAt: storm.startedAt, endedAt: storm.endedAt },
    members: rows.map((r) => ({
      // Its tenant's channel hears nothing of an alert in shadow but its resolution (a platform storm is the audit destination).
      inShadow: inShadow(r) && r.tenantChannel === storm.channel,
      alertId: Number(r.id),
      tenant: { id: r.tenantId, name: r.tenantName },
      workflow: r.workflow,
      severity: r.severity,
      status: r.status,
      consecutiveFailures: r.consecutiveFailures,
      ownerUser: r.ownerUser,
      silenced: silenceState({ status: r.status, silencedBy: r.silencedBy, silencedUntil: r.silencedUntil, silenceReason: r.silenceReason }, now).silenced,
      lastError: r.lastError,
      // Open when the storm ended: it outlived the storm, and its storm_outlived event gives it a thread of its own.
      ownThread: r.rootTs !== null || (storm.endedAt !== null && r.status === 'open'),
    })),
  };
}

/**
 * Claims the post of a storm's message: a compare-and-set lease, so that of
 * two replicas delivering two members' openings at once only one posts it.
 * A lease older than `leaseMs` (its poster died, or its outcome is unknown and
 * nothing was found) may be taken again. Undefined: not claimed; else the
 * claim it took over (null: none, or one let go as not posted): a claimer
 * that took over an expired one must look for the message before posting,
 * since its poster may have posted it and died before recording it.
 */
export async function claimStormPost(db: Db, stormId: number, now: Date, leaseMs = 60_000): Promise<{ tookOver: Date | null } | undefined> {
  // The FROM's row is read in the statement's snapshot: the claim as it was before this update.
  const { rows } = await sql<{ previous: Date | null }>`
    update storms s set root_claimed_at = ${now}
    from (select id, root_claimed_at as previous from storms where id = ${stormId}) old
    where s.id = old.id and s.root_ts is null
      and (s.root_claimed_at is null or s.root_claimed_at < ${new Date(now.getTime() - leaseMs)})
    returning old.previous`.execute(db);
  return rows[0] ? { tookOver: rows[0].previous ?? null } : undefined;
}

/** Gives an expired claim taken over back as it was (its lookup failed): the next claimer looks again. */
export async function restoreStormClaim(db: Db, stormId: number, claimedAt: Date, previous: Date): Promise<void> {
  await db.updateTable('storms').set({ rootClaimedAt: previous }).where('id', '=', stormId).where('rootTs', 'is', null).where('rootClaimedAt', '=', claimedAt).execute();
}

/** Records the storm message once it is known to exist (the first ts stays). */
export async function saveStormRoot(db: Db, stormId: number, rootTs: string, renderedEventId: number, now: Date): Promise<void> {
  await db.updateTable('storms').set({ rootTs, renderedEventId, renderedAt: now }).where('id', '=', stormId).where('rootTs', 'is', null).execute();
}

/** As renderedOutOfBand (alert-threads.ts), for a storm message answered in place from the state as of `eventId`. */
export async function stormRenderedOutOfBand(db: Db, stormId: number, eventId: number): Promise<void> {
  await db.updateTable('storms').set({ renderedEventId: eventId }).where('id', '=', stormId).where('renderedEventId', '>', eventId).execute();
}

/** An active storm in a tenant's own channel, as `/scheduler status`, the App Home and the digest mention it. */
export interface StormSummary {
  tenantId: string;
  stormId: number;
  channel: string;
  startedAt: Date;
  alerts: number;
  /** Open and shown: a member in shadow is not counted for a viewer not told of shadow alerts (`countShadow` false). */
  open: number;
}

/**
 * The storms under way in these tenants' own channels (each lists only that
 * tenant's alerts). The platform channel's storms mix tenants: only the
 * operator's views would show them, and the platform channel's own message does.
 */
export async function activeStorms(db: Db, tenantIds: readonly string[] | undefined, options: { countShadow?: boolean } = {}): Promise<StormSummary[]> {
  // A member put in shadow since is no longer told in its tenant's channel (the storm message itself lists it
  // without state, src/slack/blocks/storm-message.ts): neither is it counted open to those not told of shadow alerts.
  const openHere = options.countShadow === false ? sql<boolean>`a.status = 'open' and not ${sql.raw(IN_SHADOW_SQL)}` : sql<boolean>`a.status = 'open'`;
  if (tenantIds && tenantIds.length === 0) return [];
  const rows = await db
    .selectFrom('storms as s')
    .innerJoin('tenants as t', (j) => j.on(sql<boolean>`s.destination = 'slack:' || t.channel`))
    .innerJoin('stormAlerts as m', 'm.stormId', 's.id')
    .innerJoin('alerts as a', 'a.id', 'm.alertId')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .select((eb) => [
      't.id as tenantId',
      's.id as stormId',
      's.channel',
      's.startedAt',
      eb.fn.countAll<number>().as('alerts'),
      sql<number>`count(a.id) filter (where ${openHere})`.as('open'),
    ])
    .where('s.endedAt', 'is', null)
    .$if(!!tenantIds, (q) => q.where('t.id', 'in', tenantIds!))
    .groupBy(['t.id', 's.id', 's.channel', 's.startedAt'])
    .orderBy('s.startedAt')
    .execute();
  return rows.map((r) => ({ ...r, stormId: Number(r.stormId), alerts: Number(r.alerts), open: Number(r.open) }));
}
