import type { TranscriptCall } from '../../src/replay/transcript.js';

/** A thread as people see it: its root and, in order, the events of its replies (from each message's metadata). */
export interface ThreadShape {
  channel: string;
  rootTs: string;
  alertId: number;
  workflow: string;
  /** The root's own event first, then each reply's. */
  events: string[];
  root: TranscriptCall;
  replies: TranscriptCall[];
  updates: TranscriptCall[];
  /** chat.update of a reply (an `upstream_affected` reply edited as more are hit). */
  edits: TranscriptCall[];
}

const payload = (c: TranscriptCall) => (c.metadata as { event_payload?: Record<string, unknown> } | null)?.event_payload ?? {};
export const eventOf = (c: TranscriptCall) => String(payload(c).event);
export const alertOf = (c: TranscriptCall) => Number(payload(c).alert_id);
export const workflowOf = (c: TranscriptCall) => String(payload(c).workflow);

/**
 * Groups a transcript into threads, checking what must hold for any replay:
 * every reply and update belongs to a root the bot posted earlier in that
 * channel, and carries the same alert id in its metadata.
 */
export function threadsOf(calls: readonly TranscriptCall[]): ThreadShape[] {
  const threads = new Map<string, ThreadShape>();
  const replies = new Map<string, ThreadShape>();
  for (const c of calls) {
    if (c.method === 'chat.postMessage' && c.thread_ts === null) {
      threads.set(`${c.channel} ${c.ts}`, { channel: c.channel, rootTs: c.ts, alertId: alertOf(c), workflow: workflowOf(c), events: [eventOf(c)], root: c, replies: [], updates: [], edits: [] });
      continue;
    }
    const edited = c.method === 'chat.update' ? replies.get(`${c.channel} ${c.ts}`) : undefined;
    if (edited) {
      if (c.metadata && alertOf(c) !== edited.alertId) throw new Error(`edit at ${c.at} carries alert ${alertOf(c)} in the thread of alert ${edited.alertId}`);
      edited.edits.push(c);
      continue;
    }
    const key = `${c.channel} ${c.method === 'chat.update' ? c.ts : c.thread_ts}`;
    const thread = threads.get(key);
    if (!thread) throw new Error(`${c.method} at ${c.at} in ${c.channel} belongs to no root posted before it`);
    // A storm message's thread stands for many alerts: its replies (a shared cause) name their own.
    if (c.metadata && alertOf(c) !== thread.alertId && thread.events[0] !== 'storm') throw new Error(`${c.method} at ${c.at} carries alert ${alertOf(c)} in the thread of alert ${thread.alertId}`);
    if (c.method === 'chat.update') thread.updates.push(c);
    else {
      thread.replies.push(c);
      thread.events.push(eventOf(c));
      replies.set(`${c.channel} ${c.ts}`, thread);
    }
  }
  return [...threads.values()];
}

/** Each channel's threads, by workflow: { CACME: { 'quality-check': ['opened', 'escalated', 'resolved'] } }. */
export function storyByChannel(threads: readonly ThreadShape[]): Record<string, Record<string, string[][]>> {
  const out: Record<string, Record<string, string[][]>> = {};
  for (const t of threads) ((out[t.channel] ??= {})[t.workflow] ??= []).push(t.events);
  return out;
}
