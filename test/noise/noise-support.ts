import { threadsOf, type ThreadShape } from '../replay/transcript-shape.js';
import type { TranscriptCall } from '../../src/replay/transcript.js';

/**
 * Noise audit helpers: what one incident cost a channel in Slack calls.
 * Ephemeral answers never reach a replay (its actions go through the
 * services, not the listeners), so the calls counted are everything the
 * channel sees: roots, replies and root re-renders.
 */
export interface Cost {
  roots: number;
  replies: number;
  /** Replies that mention someone (`<@U…>` or `<!subteam^S…>`): they buzz a phone. */
  mentions: number;
  /** chat.update of the root (coalesced re-renders) and of replies. */
  updates: number;
  /** The reply events in order, e.g. ['opened', 'escalated', 'reminder', …]. */
  events: string[];
}

const mentions = (c: TranscriptCall) => /<@U|<!subteam\^/.test(c.text) || /<@U|<!subteam\^/.test(JSON.stringify(c.blocks));

export function costOf(t: ThreadShape): Cost {
  return {
    roots: 1,
    replies: t.replies.length,
    mentions: t.replies.filter(mentions).length,
    updates: t.updates.length + t.edits.length,
    events: t.events,
  };
}

/** The threads of one channel, by workflow. */
export function threadsIn(calls: readonly TranscriptCall[], channel: string): ThreadShape[] {
  return threadsOf(calls).filter((t) => t.channel === channel);
}

/** How many calls of `calls` fall into one sliding minute at most. */
export function peakPerMinute(calls: readonly TranscriptCall[]): number {
  const times = calls.map((c) => Date.parse(c.at)).sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 60_000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}

/** Replies of a thread as "HH:MM event" lines (UTC, with the date). */
export function timeline(t: ThreadShape): string[] {
  return [t.root, ...t.replies].map((c, i) => `${c.at.slice(5, 16)} ${t.events[i]}`);
}
