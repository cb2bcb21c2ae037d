import { utcText, zoneText } from '../../domain/durations.js';

/** Slack's own markup for times and people. Medium-neutral words for durations and times live in src/domain/durations.ts. */

/**
 * A time Slack shows in each reader's own zone; the fallback (old clients,
 * notifications) is UTC.
 */
export function slackDate(at: Date): string {
  return `<!date^${Math.floor(at.getTime() / 1000)}^{date_short_pretty} {time}|${utcText(at)}>`;
}

/**
 * A time the workflow's schedule names (a tick, a deadline), unambiguous to a
 * reader in any zone: its wall clock in the workflow's zone, named, then
 * Slack's rendering in the reader's own zone, said to be theirs.
 * "2026-06-15 02:00 Asia/Kathmandu (Today 22:15 your time)".
 */
export function slackDateIn(at: Date, timeZone: string): string {
  return `${zoneText(at, timeZone)} (<!date^${Math.floor(at.getTime() / 1000)}^{date_short_pretty} {time}|${utcText(at)}> your time)`;
}

export function userMention(userId: string): string {
  // Ids come from Slack payloads, but check the shape so a forged value cannot inject mrkdwn.
  return /^[UW][A-Z0-9]{2,}$/.test(userId) ? `<@${userId}>` : userId.replace(/[<>&]/g, '');
}

/** A user group (`S…`) as Slack pings it; anything else is shown as harmless text. */
export function groupMention(groupId: string): string {
  return /^S[A-Z0-9]{2,}$/.test(groupId) ? `<!subteam^${groupId}>` : groupId.replace(/[<>&]/g, '');
}

/**
 * Slack's own link form for a message (a thread's root: the client opens the
 * thread), built from the channel and ts the bot stored when it posted: no
 * chat.getPermalink call, and slack.com sends the reader to their workspace.
 */
export function threadPermalink(channel: string, ts: string): string {
  return `https://slack.com/archives/${channel}/p${ts.replace('.', '')}`;
}
