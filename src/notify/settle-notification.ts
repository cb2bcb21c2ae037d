import type { Db } from '../db/connect.js';

/**
 * Writing an attempt's outcome back. Each update is conditional on the row
 * still being `sending`, so a stale replica cannot overwrite a later verdict.
 */

export async function markSent(db: Db, id: number, now: Date, result: Record<string, unknown>): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: 'sent', sentAt: now, result: JSON.stringify(result), lastError: null, leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/** Not delivered, certainly: back to `pending`, due at `next`. */
export async function markRetry(db: Db, id: number, next: Date, error: string, countAttempt: boolean): Promise<void> {
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
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/**
 * Maybe delivered: stays `sending` with the lease dropped, so whoever claims
 * it next (this replica or another) looks for it before sending again.
 */
export async function markUnknown(db: Db, id: number, next: Date, error: string): Promise<void> {
  await db
    .updateTable('notifications')
    .set((eb) => ({ nextAttemptAt: next, lastError: error, leaseOwner: null, leaseExpiresAt: null, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

export async function markDead(db: Db, id: number, error: string): Promise<void> {
  await db
    .updateTable('notifications')
    .set((eb) => ({ status: 'dead', lastError: error, leaseOwner: null, leaseExpiresAt: null, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .execute();
}

/** Claimed but not attempted (its pacing key was busy): hand it back exactly as it was. */
export async function releaseUntried(db: Db, id: number, previousStatus: 'pending' | 'sending', next: Date): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: previousStatus, nextAttemptAt: next, leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', id)
    .where('status', '=', 'sending')
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
