import type { Db } from '../../db/connect.js';
import type { Block, SlackMessage } from '../blocks/types.js';
import { findThread } from './alert-threads.js';
import { threadPermalink } from '../blocks/format.js';
import { LIMITS, mrkdwn } from '../blocks/limits.js';

/**
 * Dependencies in Slack (issue 16, docs/alerts.md):
 * - `upstream_affected` is told once per thread: the first posts a reply,
 *   every later one edits that reply with the whole list (each event carries
 *   all of it), so the thread names every affected workflow in one message;
 * - a downstream alert's `outlived_upstream` and `upstream_broke` replies
 *   link to the upstream's thread in the same channel, when it has one, else
 *   to the storm message it sits in there (a storm member has no thread of
 *   its own, as the App Home links it: src/slack/views/home-links.ts).
 */

/** The reply an earlier `upstream_affected` of this alert posted in this destination, if one was sent. */
export async function affectedReplyTs(db: Db, alertId: number, destination: string, beforeEventId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('notifications as n')
    .innerJoin('alertEvents as e', 'e.id', 'n.eventId')
    .select((eb) => eb.ref('n.result', '->>').key('ts' as never).as('ts'))
    .where('n.alertId', '=', alertId)
    .where('n.destination', '=', destination)
    .where('n.status', '=', 'sent')
    .where('e.kind', '=', 'upstream_affected')
    .where('n.eventId', '<', beforeEventId)
    .orderBy('n.eventId')
    .executeTakeFirst();
  return (row?.ts as string | null | undefined) ?? undefined;
}


/** Where the upstream alert is discussed in this destination: its own thread, else the storm message it was folded into. */
async function upstreamMessage(db: Db, upstreamAlertId: number, destination: string): Promise<{ channel: string; ts: string; storm: boolean } | undefined> {
  const thread = await findThread(db, upstreamAlertId, destination);
  if (thread) return { channel: thread.channel, ts: thread.rootTs, storm: false };
  const storm = await db
    .selectFrom('stormAlerts as sa')
    .innerJoin('storms as s', 's.id', 'sa.stormId')
    .select(['s.channel', 's.rootTs'])
    .where('sa.alertId', '=', upstreamAlertId)
    .where('s.destination', '=', destination)
    .where('s.rootTs', 'is not', null)
    .orderBy('s.id', 'desc')
    .executeTakeFirst();
  return storm?.rootTs ? { channel: storm.channel, ts: storm.rootTs, storm: true } : undefined;
}

/** The reply with a link to the upstream alert's thread (or its storm message) in this channel appended, when the event names one and it exists. */
export async function withUpstreamLink(db: Db, message: SlackMessage, kind: string, data: unknown, destination: string): Promise<SlackMessage> {
  if (kind !== 'outlived_upstream' && kind !== 'upstream_broke') return message;
  const upstreamAlertId = (data as { upstreamAlertId?: unknown } | null)?.upstreamAlertId;
  if (typeof upstreamAlertId !== 'number') return message;
  const target = await upstreamMessage(db, upstreamAlertId, destination);
  if (!target) return message;
  const label = target.storm ? "Upstream incident's storm" : "Upstream incident's thread";
  const link: Block = { type: 'context', elements: [mrkdwn(`<${threadPermalink(target.channel, target.ts)}|${label}>`, LIMITS.contextElementText)] };
  return { ...message, blocks: [...message.blocks, link] };
}
