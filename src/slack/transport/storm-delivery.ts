import type { Db } from '../../db/connect.js';
import type { Storm } from '../../db/schema.js';
import { pagesSomeone } from '../../domain/events.js';
import { STORM_PAGE_FOLD_MS, stormKey, stormPageFolds } from '../../domain/storm.js';
import { LEASE_LOST, type DeliveryInput, type DeliveryResult, type FindDeliveredResult } from '../../notify/transport.js';
import { renderAlertReply, type AlertCard } from '../blocks/alert-card.js';
import { renderStormMessage } from '../blocks/storm-message.js';
import type { SlackMessage } from '../blocks/types.js';
import { alertMetadata, metadataKey, stormMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';
import { claimStormPost, loadStormView, recentStormPages, restoreStormClaim, saveStormRoot } from '../views/storm-queries.js';

/** How soon a member waiting for another delivery to post the storm message tries again. */
const STORM_POST_WAIT_MS = 1000;

/**
 * Events of an alert inside a storm that are posted in the storm message's
 * thread (broadcast), not only shown in it: a shared-cause callout, and every
 * event that pages someone (an escalation to critical, a critical opening with
 * someone to page), since a re-rendered storm message notifies nobody.
 */
export const postsInStormThread = (event: DeliveryInput['event']): boolean => event.kind === 'shared_cause' || pagesSomeone(event);

/** An alert whose opening a storm took in, and that has no thread of its own: its events are the storm message's. */
export function deliversToStorm(kind: string): boolean {
  // Outliving the storm is what gives the alert its own thread (the ordinary root path).
  return kind !== 'storm_outlived';
}

/**
 * Delivers one member's event to its storm: the first delivery posts the
 * storm message (rendered from every member's current state; a lease makes
 * sure one replica posts it), later ones leave it to the refresher, which
 * re-renders the message in place, coalesced and paced like roots. No event
 * of a member posts a message of its own, save a shared-cause callout and a
 * page (see `postsInStormThread`), and a page only when the storm's thread
 * has not paged the same people within STORM_PAGE_FOLD_MS (stormPageFolds).
 */
export async function deliverToStorm(db: Db, api: SlackOutboxApi, input: DeliveryInput, storm: Storm, card: () => Promise<AlertCard>, page: StormPage = async (render) => ({ message: render(input.event) })): Promise<DeliveryResult> {
  const { notification: n, event } = input;
  let rootTs = storm.rootTs;
  if (!rootTs) {
    const root = await postStormMessage(db, api, input, storm);
    // The storm message's post notifies nobody: a critical opening also pages in a broadcast reply.
    // Should that reply fail, the retry finds the storm's root saved and posts only the reply.
    if (root.kind !== 'sent' || !postsInStormThread(event)) return root;
    rootTs = root.ref;
  }
  if (postsInStormThread(event)) {
    // The same people were paged in this thread moments ago (a storm escalating at one deadline): the message shows it.
    if (event.kind !== 'shared_cause' && stormPageFolds(event.data, await recentStormPages(db, Number(storm.id), n.destination, new Date(input.now.getTime() - STORM_PAGE_FOLD_MS)), input.now)) {
      return { kind: 'sent', ref: rootTs, result: { storm: Number(storm.id), rerender: true, folded: true } };
    }
    const shown = await card();
    // A page whose names reach nobody falls back as any page does (page-reach.ts); a shared-cause callout names nobody.
    const { message: reply } = await page((e) => renderAlertReply(e, shown, input.now));
    if (!(await input.keepLease())) return LEASE_LOST;
    const posted = await api.postMessage({ channel: storm.channel, ...reply, metadata: memberMetadata(input, event.kind, n.idempotencyKey), threadTs: rootTs, replyBroadcast: true });
    if (!posted.ok) return posted;
    return { kind: 'sent', ref: posted.ts, result: { ts: posted.ts, threadTs: rootTs, storm: Number(storm.id) } };
  }
  return { kind: 'sent', ref: rootTs, result: { storm: Number(storm.id), rerender: true } };
}

/** The page as sent now, rendered by `render` from the event (its names replaced when it falls back: page-reach.ts). */
export type StormPage = (render: (event: DeliveryInput['event']) => SlackMessage) => Promise<{ message: SlackMessage }>;

const memberMetadata = (input: DeliveryInput, kind: string, key: string) =>
  alertMetadata({ alertId: input.alert.id, tenant: input.tenant.id, workflow: input.workflow.name, event: kind, severity: input.alert.severity, key });

/** The storm's first delivery posts its message, once across replicas (a lease on the storm row). */
async function postStormMessage(db: Db, api: SlackOutboxApi, input: DeliveryInput, storm: Storm): Promise<DeliveryResult> {
  const n = input.notification;
  const id = Number(storm.id);
  const claim = await claimStormPost(db, id, input.now);
  // Another member's delivery is posting it: not a failure of the channel, so it is not held for it.
  if (!claim) return { kind: 'busy', error: `storm ${id}'s message is being posted by another delivery`, retryAfterMs: STORM_POST_WAIT_MS };
  const key = stormKey(id, n.destination);
  if (claim.tookOver) {
    // The claim's poster ran out of time: it may have posted the message and died before recording it.
    const found = await findStormMessage(api, storm, key);
    if (!found.ok) {
      await restoreStormClaim(db, id, input.now, claim.tookOver);
      return { kind: 'transient', error: `looking for storm ${id}'s message: ${found.error}` };
    }
    if (found.ts) {
      await saveStormRoot(db, id, found.ts, n.eventId, input.now);
      return { kind: 'sent', ref: found.ts, result: { ts: found.ts, storm: id, root: true, recovered: true } };
    }
  }
  const view = await loadStormView(db, id, input.now);
  if (!view) return { kind: 'permanent', error: `storm ${id} not found` };
  // Never empty: the delivering alert is a member.
  if (!(await input.keepLease())) {
    // Not posted: the replica now holding the row may post it at once.
    await releaseStormPost(db, id);
    return LEASE_LOST;
  }
  const posted = await api.postMessage({ channel: storm.channel, ...renderStormMessage(view), metadata: stormMetadata(view, key) ?? memberMetadata(input, 'storm', key) });
  if (!posted.ok) {
    // Refused before anything was posted: let the next delivery claim it at once. An unknown outcome keeps the lease.
    if (posted.kind !== 'unknown') await releaseStormPost(db, id);
    return posted;
  }
  await saveStormRoot(db, id, posted.ts, view.eventId, input.now);
  return { kind: 'sent', ref: posted.ts, result: { ts: posted.ts, storm: id, root: true } };
}

/** After an unknown outcome: the storm message (or the member's reply in its thread) looked up by its key. */
export async function findStormDelivery(db: Db, api: SlackOutboxApi, input: DeliveryInput, storm: Storm, lookbackMs: number): Promise<FindDeliveredResult> {
  const n = input.notification;
  if (storm.rootTs && postsInStormThread(input.event)) {
    const r = await api.replies(storm.channel, storm.rootTs);
    if (!r.ok) return { kind: 'failed', error: r.error, permanent: r.kind === 'permanent', credentials: r.kind === 'credentials' };
    const hit = r.messages.find((m) => metadataKey(m) === n.idempotencyKey);
    return hit ? { kind: 'found', ref: hit.ts, result: { ts: hit.ts, threadTs: storm.rootTs } } : { kind: 'not_found' };
  }
  if (storm.rootTs) return { kind: 'not_found' }; // a re-render only: delivering again posts nothing
  const r = await findStormMessage(api, storm, stormKey(Number(storm.id), n.destination), new Date(n.createdAt.getTime() - lookbackMs));
  if (!r.ok) return { kind: 'failed', error: r.error, permanent: r.kind === 'permanent', credentials: r.kind === 'credentials' };
  if (!r.ts) {
    // Not posted, or not yet: another member's row may be in flight on another replica (a destination
    // has one row in flight per replica, not overall), holding the claim and posting right now. The
    // claim is dropped only when no other member is in flight: then it is this row's own earlier
    // attempt's, and this row may post now rather than wait out the claim's minute.
    await releaseStaleStormPost(db, Number(storm.id), n.id);
    return { kind: 'not_found' };
  }
  await saveStormRoot(db, Number(storm.id), r.ts, n.eventId, input.now);
  // A page follows the storm message it posted; it cannot have gone out before the message was recorded: delivering again posts only that.
  if (postsInStormThread(input.event)) return { kind: 'not_found' };
  return { kind: 'found', ref: r.ts, result: { ts: r.ts, storm: Number(storm.id), root: true } };
}

/** The storm message in its channel's history, by its key (from `oldest`, by default a minute before the storm began). */
async function findStormMessage(api: SlackOutboxApi, storm: Storm, key: string, oldest = new Date(storm.startedAt.getTime() - 60_000)) {
  const r = await api.history(storm.channel, oldest, 200);
  if (!r.ok) return r;
  return { ok: true as const, ts: r.messages.find((m) => metadataKey(m) === key && !m.threadTs)?.ts };
}

/**
 * After a lookup found the storm message missing: lets the next delivery claim its post at once,
 * unless a member row other than `rowId` is being sent (leased to a sender, which may be posting it).
 */
async function releaseStaleStormPost(db: Db, stormId: number, rowId: number): Promise<void> {
  await db
    .updateTable('storms')
    .set({ rootClaimedAt: null })
    .where('id', '=', stormId)
    .where('rootTs', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('notifications as n')
            .innerJoin('stormAlerts as m', (j) => j.onRef('m.alertId', '=', 'n.alertId').onRef('m.destination', '=', 'n.destination'))
            .select('n.id')
            .where('m.stormId', '=', stormId)
            .where('n.id', '<>', rowId)
            .where('n.status', '=', 'sending')
            .where('n.leaseOwner', 'is not', null),
        ),
      ),
    )
    .execute();
}

/** Lets the next delivery claim the storm's post at once (it has not been posted). */
async function releaseStormPost(db: Db, stormId: number): Promise<void> {
  await db.updateTable('storms').set({ rootClaimedAt: null }).where('id', '=', stormId).where('rootTs', 'is', null).execute();
}
