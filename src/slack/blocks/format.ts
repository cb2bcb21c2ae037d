/** Words and times for people, shared by the builders. Pure: `now` is a parameter. */

/** 25_320_000 → "7h 02m"; 90_000 → "1m 30s"; 2 days → "2d 0h". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** A cadence of `seconds` between ticks in words: "every 5 minutes", "hourly", "daily". */
export function cadenceInWords(seconds: number): string {
  const known: [number, string][] = [
    [60, 'every minute'],
    [3600, 'hourly'],
    [86_400, 'daily'],
    [7 * 86_400, 'weekly'],
  ];
  for (const [s, words] of known) if (seconds === s) return words;
  if (seconds < 3600 && seconds % 60 === 0) return `every ${seconds / 60} minutes`;
  if (seconds < 86_400 && seconds % 3600 === 0) return `every ${seconds / 3600} hours`;
  if (seconds % 86_400 === 0) return `every ${seconds / 86_400} days`;
  return `about every ${formatDuration(seconds * 1000)}`;
}

/**
 * A time Slack shows in each reader's own zone; the fallback (old clients,
 * notifications) is UTC.
 */
export function slackDate(at: Date): string {
  const fallback = `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${Math.floor(at.getTime() / 1000)}^{date_short_pretty} {time}|${fallback}>`;
}

/** Plain-text time for fallbacks and modals. */
export function utcText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function userMention(userId: string): string {
  // Ids come from Slack payloads, but check the shape so a forged value cannot inject mrkdwn.
  return /^[UW][A-Z0-9]{2,}$/.test(userId) ? `<@${userId}>` : userId.replace(/[<>&]/g, '');
}

/** A user group mention that notifies its members; the id's shape is checked like a user's. */
export function groupMention(groupId: string): string {
  return /^S[A-Z0-9]{2,}$/.test(groupId) ? `<!subteam^${groupId}>` : groupId.replace(/[<>&]/g, '');
}

/** Durations in commands: 30m, 4h, 1d, 90s. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,5})\s*(s|m|h|d)$/i.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]!.toLowerCase() as 's' | 'm' | 'h' | 'd'];
  return n > 0 ? n * unit : undefined;
}
