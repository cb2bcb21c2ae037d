import type { Db } from '../../db/connect.js';
import type { AlertThread } from '../../db/schema.js';

export async function findThread(db: Db, alertId: number, destination: string): Promise<AlertThread | undefined> {
  return db.selectFrom('alertThreads').selectAll().where('alertId', '=', alertId).where('destination', '=', destination).executeTakeFirst();
}

/**
 * Records a root once it is known to exist, with the key of the row that
 * posted it. A second writer (a lookup that found the same root) changes
 * nothing: the first ts stays.
 */
export async function saveThread(db: Db, t: { alertId: number; destination: string; channel: string; rootTs: string; rootKey: string; renderedEventId: number; now: Date }): Promise<void> {
  await db
    .insertInto('alertThreads')
    .values({ alertId: t.alertId, destination: t.destination, channel: t.channel, rootTs: t.rootTs, rootKey: t.rootKey, renderedEventId: t.renderedEventId, createdAt: t.now })
    .onConflict((oc) => oc.columns(['alertId', 'destination']).doNothing())
    .execute();
}

/** The key the root was posted with, so a re-render keeps the root's own metadata. */
export async function rootKey(db: Db, alertId: number, destination: string, rootTs: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('notifications')
    .select('idempotencyKey')
    .where('alertId', '=', alertId)
    .where('destination', '=', destination)
    .where('status', '=', 'sent')
    .where((eb) => eb(eb.ref('result', '->>').key('ts' as never), '=', rootTs))
    .orderBy('id')
    .executeTakeFirst();
  return row?.idempotencyKey;
}

/**
 * A root rendered out of band (a click's in-place answer, a form's
 * chat.update) from the state as of `eventId`. Should the refresher have shown
 * a newer state meanwhile, this answer may have landed over it: the thread is
 * marked as showing `eventId` again, so the refresher renders the newest
 * state once more rather than leave the root behind.
 */
export async function renderedOutOfBand(db: Db, at: { alertId: number; channel: string; rootTs?: string; eventId: number }): Promise<void> {
  let q = db
    .updateTable('alertThreads')
    .set({ renderedEventId: at.eventId })
    .where('alertId', '=', at.alertId)
    .where('channel', '=', at.channel)
    .where('renderedEventId', '>', at.eventId);
  if (at.rootTs) q = q.where('rootTs', '=', at.rootTs);
  await q.execute();
}
