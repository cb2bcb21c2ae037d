import type { Db } from '../../db/connect.js';
import { isNotifiedKind, ownReplyKey, pagesSomeone as broadcasts } from '../../domain/events.js';
import type { LauncherResolver } from '../../launcher.js';
import { LEASE_LOST, type CredentialProbe, type DeliveryInput, type DeliveryResult, type FindDeliveredResult, type Transport } from '../../notify/transport.js';
import { findThread, saveThread } from './alert-threads.js';
import { cardFrom, loadAlertCard } from '../views/alert-card-loader.js';
import { renderAlertReply, renderAlertRoot, type AlertCard } from '../blocks/alert-card.js';
import type { SlackMessage } from '../blocks/types.js';
import { alertMetadata, metadataKey } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';
import { affectedReplyTs, withUpstreamLink } from './upstream-replies.js';
import { deliversToStorm, deliverToStorm, findStormDelivery, postsInStormThread } from './storm-delivery.js';
import { stormOf } from '../views/storm-queries.js';
import type { SlackDirectory } from './directory.js';
import { channelAudience, pagedMessage, type PagingConfig } from './page-reach.js';

/** Slack's documented pace for chat.postMessage: about one message per second per channel. */
export const SLACK_CHANNEL_INTERVAL_MS = 1000;

/** How far back the channel history is searched for a root whose post had an unknown outcome. */
const LOOKBACK_MS = 24 * 3_600_000;

/**
 * Slack delivery of alert events. The first delivered event of an alert in a
 * channel posts the thread's root (rendered from current state); every later
 * notified event is a reply in that thread, except a later `upstream_affected`,
 * which edits the first one's reply (upstream-replies.ts). Quiet events (failure counts)
 * post nothing: the root refresher re-renders the root in place, coalesced.
 */
export function slackTransport(deps: { db: Db; launchers: LauncherResolver; config?: PagingConfig }, api: SlackOutboxApi, directory?: SlackDirectory): Transport {
  const paging = (input: DeliveryInput, render: (event: DeliveryInput['event']) => SlackMessage) =>
    pagedMessage(directory, deps.config, { event: input.event, tenant: input.tenant, channel: input.target, pages: broadcasts(input.event) }, (event) => render(event as DeliveryInput['event']));
  return {
    kind: 'slack',
    pacing: { key: (destination) => destination, minIntervalMs: api.mode === 'console' ? 0 : SLACK_CHANNEL_INTERVAL_MS },
    posts: (input) => postsMessage(deps.db, input),

    async deliver(input: DeliveryInput): Promise<DeliveryResult> {
      const { notification: n, event } = input;
      const thread = await findThread(deps.db, n.alertId, n.destination);
      if (isQuiet(event)) return { kind: 'sent', ref: thread?.rootTs ?? '', result: { rerender: true } };

      const { alert, tenant, workflow } = input;
      const metadata = alertMetadata({ alertId: alert.id, tenant: tenant.id, workflow: workflow.name, event: event.kind, severity: alert.severity, key: n.idempotencyKey });
      const storm = !thread && deliversToStorm(event.kind) ? await stormOf(deps.db, n.alertId, n.destination) : undefined;
      if (storm) return deliverToStorm(deps.db, api, input, storm, async () => ({ ...(await cardFrom(deps.db, deps.launchers, input.alert, input.workflow, input.tenant)), audience: channelAudience(deps.config, input.target) }), (render) => paging(input, render));
      if (!thread) {
        const loaded = await loadAlertCard(deps.db, deps.launchers, n.alertId);
        if (!loaded) return { kind: 'permanent', error: `alert ${n.alertId} not found` };
        loaded.card.audience = channelAudience(deps.config, input.target);
        const message = renderAlertRoot(loaded.card, input.now);
        // Every send below first renews the row's lease: a sender that stalled past it must not post what another replica now sends.
        if (!(await input.keepLease())) return LEASE_LOST;
        const posted = await api.postMessage({ channel: input.target, ...message, metadata });
        if (!posted.ok) return posted;
        await saveThread(deps.db, { alertId: n.alertId, destination: n.destination, channel: input.target, rootTs: posted.ts, rootKey: n.idempotencyKey, renderedEventId: loaded.eventId, now: input.now });
        return replyUnderOwnRoot(api, input, { channel: input.target, rootTs: posted.ts }, loaded.card, paging);
      }
      const card = { ...(await cardFrom(deps.db, deps.launchers, input.alert, input.workflow, input.tenant)), audience: channelAudience(deps.config, input.target) };
      // An earlier attempt of this row posted the root: what may be left is its own reply.
      if (thread.rootKey === n.idempotencyKey) return replyUnderOwnRoot(api, input, thread, card, paging);
      const page = await paging(input, (e) => renderAlertReply(e, card, input.now));
      const message = await withUpstreamLink(deps.db, page.message, event.kind, event.data, n.destination);
      const earlier = event.kind === 'upstream_affected' ? await affectedReplyTs(deps.db, n.alertId, n.destination, n.eventId) : undefined;
      if (!(await input.keepLease())) return LEASE_LOST;
      if (earlier) {
        const edited = await api.updateMessage({ channel: thread.channel, ts: earlier, ...message, metadata });
        if (!edited.ok) return edited;
        return { kind: 'sent', ref: earlier, result: { ts: earlier, threadTs: thread.rootTs, edited: true } };
      }
      const posted = await api.postMessage({ channel: thread.channel, ...message, metadata, threadTs: thread.rootTs, replyBroadcast: page.broadcast });
      if (!posted.ok) return posted;
      return { kind: 'sent', ref: posted.ts, result: { ts: posted.ts, threadTs: thread.rootTs } };
    },

    probeCredentials: () => probeToken(api),

    async findDelivered(input: DeliveryInput): Promise<FindDeliveredResult> {
      const n = input.notification;
      const key = n.idempotencyKey;
      const thread = await findThread(deps.db, n.alertId, n.destination);
      if (thread) {
        const own = thread.rootKey === key;
        if (own && !repliesUnderItsRoot(input.event)) return { kind: 'found', ref: thread.rootTs, result: { ts: thread.rootTs, root: true } };
        // Under its own root a row's reply carries a key of its own: the root (which carries the row's) is not the reply.
        const wanted = own ? ownReplyKey(key) : key;
        const r = await api.replies(thread.channel, thread.rootTs);
        if (!r.ok) return lookupFailed(r);
        const hit = r.messages.find((m) => metadataKey(m) === wanted);
        if (!hit) return { kind: 'not_found' };
        return own ? { kind: 'found', ref: thread.rootTs, result: { ts: thread.rootTs, root: true, replyTs: hit.ts } } : { kind: 'found', ref: hit.ts, result: { ts: hit.ts, threadTs: thread.rootTs } };
      }
      const storm = deliversToStorm(input.event.kind) ? await stormOf(deps.db, n.alertId, n.destination) : undefined;
      if (storm) return findStormDelivery(deps.db, api, input, storm, LOOKBACK_MS);
      const r = await api.history(input.target, new Date(n.createdAt.getTime() - LOOKBACK_MS), 200);
      if (!r.ok) return lookupFailed(r);
      const hit = r.messages.find((m) => metadataKey(m) === key && !m.threadTs);
      if (!hit) return { kind: 'not_found' };
      // The root went out but was never recorded: record it now. The root was
      // rendered from a state at least as new as this event.
      await saveThread(deps.db, { alertId: n.alertId, destination: n.destination, channel: input.target, rootTs: hit.ts, rootKey: key, renderedEventId: n.eventId, now: input.now });
      // Its own reply cannot have gone out before the root was recorded: delivering again posts only that.
      if (repliesUnderItsRoot(input.event)) return { kind: 'not_found' };
      return { kind: 'found', ref: hit.ts, result: { ts: hit.ts, root: true } };
    },
  };
}

/**
 * Whether `deliver` may post a message for this row (Transport.posts), decided as it decides:
 * not for a quiet event, nor for a storm member's event that posts nothing in the storm's
 * thread once the storm message is up (an alert with a thread of its own posts there instead).
 */
async function postsMessage(db: Db, { notification: n, event }: Pick<DeliveryInput, 'notification' | 'event'>): Promise<boolean> {
  if (isQuiet(event)) return false;
  if (!deliversToStorm(event.kind) || postsInStormThread(event)) return true;
  const storm = await stormOf(db, n.alertId, n.destination);
  return !storm?.rootTs || !!(await findThread(db, n.alertId, n.destination));
}

/** An event that posts nothing: the root refresher re-renders the alert's root in place. */
function isQuiet(event: DeliveryInput['event']): boolean {
  return !isNotifiedKind(event.kind) || (event.data as { quiet?: unknown }).quiet === true;
}

/** Whether Slack takes the bot token (auth.test): the probe that ends a workspace held for a refused token. */
async function probeToken(api: SlackOutboxApi): Promise<CredentialProbe> {
  const r = await api.authTest();
  return r.ok ? { ok: true } : { ok: false, error: r.error, credentials: r.kind === 'credentials' };
}

/** An event that, when it posts its alert's root, is also told in a reply of its own under it. */
function repliesUnderItsRoot(event: DeliveryInput['event']): boolean {
  return broadcasts(event) || event.kind === 'storm_outlived';
}

/**
 * After a row posted its alert's root: the root alone is the delivery, or (a
 * page, outliving a storm) a reply follows under it, with a key of its own so
 * that no two messages carry one key. A root's post notifies nobody: an alert
 * that opens critical pages in a broadcast reply. Should the reply fail, the
 * retry finds the root recorded as this row's and posts only the reply.
 */
async function replyUnderOwnRoot(api: SlackOutboxApi, input: DeliveryInput, thread: { channel: string; rootTs: string }, card: AlertCard, paging: Paging): Promise<DeliveryResult> {
  const { notification: n, event } = input;
  if (!repliesUnderItsRoot(event)) return { kind: 'sent', ref: thread.rootTs, result: { ts: thread.rootTs, root: true } };
  const metadata = alertMetadata({ alertId: input.alert.id, tenant: input.tenant.id, workflow: input.workflow.name, event: event.kind, severity: input.alert.severity, key: ownReplyKey(n.idempotencyKey) });
  if (!(await input.keepLease())) return LEASE_LOST;
  const { message, broadcast } = await paging(input, (e) => renderAlertReply(e, card, input.now));
  const reply = await api.postMessage({ channel: thread.channel, ...message, metadata, threadTs: thread.rootTs, replyBroadcast: broadcast });
  if (!reply.ok) return reply;
  return { kind: 'sent', ref: thread.rootTs, result: { ts: thread.rootTs, root: true, replyTs: reply.ts } };
}

/** The page's message and whether it is broadcast, as sent now (page-reach.ts). */
type Paging = (input: DeliveryInput, render: (event: DeliveryInput['event']) => SlackMessage) => Promise<{ message: SlackMessage; broadcast: boolean }>;

function lookupFailed(r: { kind: string; error: string; retryAfterMs?: number }): FindDeliveredResult {
  return { kind: 'failed', error: r.error, permanent: r.kind === 'permanent', credentials: r.kind === 'credentials', ...(r.kind === 'rate_limited' ? { retryAfterMs: r.retryAfterMs } : {}) };
}
