import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/connect.js';
import { credentialScope, recordFailure, refusalNoticeDue, type Outage, type OutageCause, type OutagePolicy } from '../domain/destination-outage.js';

/**
 * Writing an attempt's outcome back. Each update is conditional on the row
 * still being `sending`, so a stale replica cannot overwrite a later verdict;
 * all but `sent` also on the row still being leased to the writer (`Held`):
 * a sender slower than its lease, whose row another replica has claimed and
 * is sending, must not hand that row back (pending, or its lease dropped)
 * for a third to claim and send alongside it. `sent` is recorded whoever
 * holds the row: it is the truth, and the holder's own settle then changes nothing.
 */

/** A claimed row and the sender that claimed it (its `lease_owner`). */
export interface Held {
  id: number;
  owner: string;
}

/** An outage a settled row ended: its key is the row's destination, or the credential scope it is in (`slack:*`). */
export type EndedOutage = Outage & { destination: string };

/**
 * Delivered. The destination evidently works, and so do its credentials, so
 * an outage it had is over, and so is a credential outage of its scope:
 * ended in the same statement (this runs once per message), and returned so
 * the sender can say it recovered.
 */
export async function markSent(db: Db, row: { id: number; destination: string }, now: Date, result: Record<string, unknown>): Promise<EndedOutage[]> {
  return settleEndingOutage(db, row, undefined, true, true, sql`status = 'sent', sent_at = ${now}, result = ${JSON.stringify(result)}, last_error = null, lease_owner = null, lease_expires_at = null`);
}

/** Not to be sent, ever (the transport's choice, `skipped`): settled without touching the destination's outage. */
export async function markSkipped(db: Db, row: Held, reason: string): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: 'skipped', result: JSON.stringify({ skipped: reason }), lastError: null, leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', row.owner)
    .execute();
}

/**
 * Settles a row being sent and ends its destination's outage in the same
 * statement (with `scope`, its credential scope's too), returning the
 * outages that ended.
 */
async function settleEndingOutage(db: Db, row: { id: number; destination: string }, owner: string | undefined, scope: boolean, delivered: boolean, set: RawBuilder<unknown>): Promise<EndedOutage[]> {
  const keys = [...new Set([row.destination, ...(scope ? [credentialScope(row.destination)] : [])])];
  const { rows } = await sql<EndedOutage>`
    with settled as (
      update notifications set ${set}
      where id = ${row.id} and status = 'sending' ${owner === undefined ? sql`` : sql`and lease_owner = ${owner}`}
      returning destination
    ), accepted as (
      ${delivered ? sql`delete from destination_refusals r using settled where r.destination = settled.destination returning r.destination` : sql`select null`}
    )
    delete from destination_outages o using settled where o.destination = any(${keys}::text[])
    returning o.destination, o.failing_since, o.failures, o.held_until, o.last_error, o.noticed_at, o.cause
  `.execute(db);
  return rows;
}

/** A destination's refusal as recorded: `tell` when the platform is to hear of it now (the first, or a day after the last notice). */
export interface Refusal {
  tell: boolean;
  firstRefusedAt: Date;
  refusals: number;
}

/**
 * Counts a refusal for good against its destination, under a lock on it so
 * that replicas seeing its rows go dead at once tell it once; whether it is
 * told now is `refusalNoticeDue` (src/domain/destination-outage.ts).
 */
export async function noteRefusal(db: Db, destination: string, error: string, now: Date): Promise<Refusal> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`destination_refusals:${destination}`}))`.execute(trx);
    const before = await trx.selectFrom('destinationRefusals').selectAll().where('destination', '=', destination).executeTakeFirst();
    const tell = refusalNoticeDue(before?.noticedAt, now);
    if (!before) {
      await trx.insertInto('destinationRefusals').values({ destination, firstRefusedAt: now, refusals: 1, lastError: error, noticedAt: now }).execute();
      return { tell, firstRefusedAt: now, refusals: 1 };
    }
    await trx
      .updateTable('destinationRefusals')
      .set({ refusals: before.refusals + 1, lastError: error, ...(tell ? { noticedAt: now } : {}) })
      .where('destination', '=', destination)
      .execute();
    return { tell, firstRefusedAt: before.firstRefusedAt, refusals: before.refusals + 1 };
  });
}

/** Not delivered, certainly: back to `pending`, due at `next`. */
export async function markRetry(db: Db, row: Held, next: Date, error: string, countAttempt: boolean): Promise<void> {
  await db
    .updateTable('notifications')
    .set((eb) => ({
      status: 'pending',
      nextAttemptAt: next,
      lastError: error,
      leaseOwner: null,
      leaseExpiresAt: null,
      ...(countAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
    }))
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', row.owner)
    .execute();
}

/**
 * Maybe delivered: stays `sending` with the lease dropped, so whoever claims
 * it next (this replica or another) looks for it before sending again.
 */
export async function markUnknown(db: Db, row: Held, next: Date, error: string): Promise<void> {
  await db
    .updateTable('notifications')
    .set((eb) => ({ nextAttemptAt: next, lastError: error, leaseOwner: null, leaseExpiresAt: null, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', row.owner)
    .execute();
}

/**
 * Undeliverable for good. A permanent answer is still an answer: an outage
 * the destination had (it was unreachable) is over, ended in the same
 * statement and returned, so the sender can say how it ended
 * (`outageEndNotice`, src/domain/destination-outage.ts). A credential outage
 * of its wider scope (`slack:*`) is not: a row can go dead without Slack
 * having been asked (its alert gone, its destination no longer configured),
 * and that says nothing of the token; a delivery or the probe ends it.
 */
export async function markDead(db: Db, row: Held & { destination: string }, error: string): Promise<EndedOutage[]> {
  return settleEndingOutage(db, row, row.owner, false, false, sql`status = 'dead', last_error = ${error}, lease_owner = null, lease_expires_at = null, attempts = attempts + 1`);
}

/** Claimed but not attempted (its pacing key was busy): hand it back exactly as it was. */
export async function releaseUntried(db: Db, row: Held, previousStatus: 'pending' | 'sending', next: Date): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: previousStatus, nextAttemptAt: next, leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', row.id)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', row.owner)
    .execute();
}

/**
 * Leases this owner holds on rows it can no longer settle (the database
 * failed mid-delivery): dropped, status kept, so the rows are claimable now
 * and the next claimer of a `sending` row checks for an earlier delivery first.
 */
export async function releaseLeases(db: Db, ids: number[], owner: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('notifications')
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where('id', 'in', ids)
    .where('status', '=', 'sending')
    .where('leaseOwner', '=', owner)
    .execute();
}

/**
 * Not delivered for a reason that may go away (`transient`), maybe
 * delivered (`unknown`, looked up before any resend), or refused for the
 * bot's credentials (`cause` `credentials`, `destination` then the
 * credential scope, src/domain/destination-outage.ts): the whole destination
 * (or scope) is held for one back-off and this row is due when the hold
 * ends. No attempt count makes it dead; only a permanent answer does. One
 * transaction, so two replicas failing on the same destination count twice
 * rather than overwrite each other.
 */
export async function holdDestination(
  db: Db,
  f: { row: Held; destination: string; error: string; outcome: 'transient' | 'unknown'; now: Date; policy: OutagePolicy; cause?: OutageCause },
): Promise<{ outage: Outage; raiseNotice: boolean }> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('destinationOutages')
      .values({ destination: f.destination, failingSince: f.now, failures: 0, heldUntil: f.now, lastError: f.error, cause: f.cause ?? 'unreachable' })
      .onConflict((oc) => oc.column('destination').doNothing())
      .execute();
    const current = await trx.selectFrom('destinationOutages').selectAll().where('destination', '=', f.destination).forUpdate().executeTakeFirstOrThrow();
    const next = recordFailure(current, f.error, f.now, f.policy, f.cause);
    await trx.updateTable('destinationOutages').set(next.outage).where('destination', '=', f.destination).execute();
    if (f.outcome === 'transient') await markRetry(trx, f.row, next.outage.heldUntil, f.error, true);
    else await markUnknown(trx, f.row, next.outage.heldUntil, f.error);
    return next;
  });
}
