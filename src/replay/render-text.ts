import type { ReplayResult } from './replay-scenario.js';
import type { TranscriptCall } from './transcript.js';

/**
 * The terminal form of a replay: one line per message (time, channel,
 * thread, text), actions where they happened, runs of root re-renders folded
 * into one line, then the summary.
 */

const MESSAGE_WIDTH = 150;

interface Line {
  at: Date;
  channel: string;
  thread: string;
  text: string;
}

export function renderReplayText(result: ReplayResult, title: string): string {
  const { scenario, transcript } = result;
  const out: string[] = [];
  out.push(`Replay of ${title}`);
  if (scenario.description) out.push(...wrap(scenario.description, 100).map((l) => `  ${l}`));
  out.push(
    `  ${day(scenario.start)} ${hhmm(scenario.start)} → ${day(scenario.until) === day(scenario.start) ? '' : `${day(scenario.until)} `}${hhmm(scenario.until)} UTC · ` +
      `${plural(scenario.tenants.length, 'tenant')}, ${plural(scenario.workflows.length, 'workflow')}` +
      (scenario.platformChannel ? ` · platform channel ${scenario.platformChannel}` : ''),
  );
  out.push('');

  const lines = timeline(result);
  if (lines.length > 0) {
    const cw = Math.max(7, ...lines.map((l) => l.channel.length));
    const tw = Math.max(6, ...lines.map((l) => l.thread.length));
    out.push(`  ${'TIME'.padEnd(8)}  ${'CHANNEL'.padEnd(cw)}  ${'THREAD'.padEnd(tw)}  MESSAGE`);
    let lastDay = day(scenario.start);
    for (const l of lines) {
      if (day(l.at) !== lastDay) {
        lastDay = day(l.at);
        out.push(`  ── ${lastDay} ──`);
      }
      out.push(`  ${hhmmss(l.at)}  ${l.channel.padEnd(cw)}  ${l.thread.padEnd(tw)}  ${l.text}`);
    }
  }
  if (transcript.calls.length === 0) out.push('  (no Slack messages)');
  out.push('');

  const s = transcript.summary;
  const posted = s.roots + s.replies;
  out.push('Summary');
  out.push(`  alerts opened   ${String(s.alerts).padStart(5)}`);
  out.push(`  root messages   ${String(s.roots).padStart(5)}   one per alert per channel`);
  out.push(`  replies         ${String(s.replies).padStart(5)}   in those threads`);
  out.push(`  root updates    ${String(s.updates).padStart(5)}   re-rendered in place, no notification`);
  out.push(`  failed ticks    ${String(s.failedTicks).padStart(5)}   failed or missed after retries`);
  out.push(
    `  One message per failure would have been ${plural(result.oneMessagePerFailure, 'message')} (each failed tick in every channel it concerns); ` +
      `this replay posted ${posted}${s.roots ? ` in ${plural(s.roots, 'thread')}` : ''}.`,
  );
  out.push(`  Replayed ${span(scenario.until.getTime() - scenario.start.getTime())} of virtual time in ${(result.elapsedMs / 1000).toFixed(1)} s (${result.instants} instants).`);
  return out.join('\n');
}

function timeline(result: ReplayResult): Line[] {
  const threads = new Map<string, string>();
  let next = 1;
  const threadOf = (channel: string, rootTs: string) => {
    const key = `${channel} ${rootTs}`;
    let label = threads.get(key);
    if (!label) threads.set(key, (label = `#${next++}`));
    return label;
  };
  const workflowOf = (c: TranscriptCall) => String((c.metadata?.event_payload as { workflow?: string } | undefined)?.workflow ?? '');

  type Entry = { at: Date; order: number; line?: Line; call?: TranscriptCall };
  const entries: Entry[] = [
    ...result.actions.map((a, i) => ({
      at: a.at,
      order: i,
      line: { at: a.at, channel: a.channel, thread: 'action', text: `${a.user}: ${a.action.replace(/_/g, ' ')} ${a.workflow.split('/')[1]} → ${a.result}` },
    })),
    ...result.transcript.calls.map((c, i) => ({ at: new Date(c.at), order: result.actions.length + i, call: c })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime() || a.order - b.order);

  const lines: Line[] = [];
  // The open fold of root re-renders per thread, until something is posted in that thread.
  const folds = new Map<string, { line: Line; count: number; first: Date }>();
  // Replies by ts: an update of one is an edited reply (upstream_affected), not a root re-render.
  const replyRoot = new Map<string, string>();
  for (const e of entries) {
    if (e.line) {
      lines.push(e.line);
      continue;
    }
    const c = e.call!;
    if (c.method === 'chat.postMessage') {
      const root = c.thread_ts ?? c.ts;
      const label = threadOf(c.channel, root);
      folds.delete(`${c.channel} ${root}`);
      if (c.thread_ts) replyRoot.set(`${c.channel} ${c.ts}`, c.thread_ts);
      lines.push({ at: e.at, channel: c.channel, thread: c.thread_ts ? `${label} ↳` : `${label} new`, text: oneLine(c.text) });
      continue;
    }
    const key = `${c.channel} ${c.ts}`;
    const editedIn = replyRoot.get(key);
    if (editedIn) {
      lines.push({ at: e.at, channel: c.channel, thread: `${threadOf(c.channel, editedIn)} ↳✎`, text: oneLine(`reply edited: ${c.text}`) });
      continue;
    }
    const label = threadOf(c.channel, c.ts);
    const fold = folds.get(key);
    if (fold) {
      fold.count++;
      fold.line.thread = `${label} ✎×${fold.count}`;
      fold.line.text = oneLine(`root updated ${hhmm(fold.first)}–${hhmm(e.at)}, now: ${c.text}`);
      continue;
    }
    const line = { at: e.at, channel: c.channel, thread: `${label} ✎`, text: oneLine(`root updated: ${c.text || workflowOf(c)}`) };
    folds.set(key, { line, count: 1, first: e.at });
    lines.push(line);
  }
  return lines;
}

function oneLine(text: string): string {
  const flat = plainText(text).replace(/\s+/g, ' ').trim();
  return flat.length > MESSAGE_WIDTH ? `${flat.slice(0, MESSAGE_WIDTH - 1)}…` : flat;
}

/** Slack mrkdwn as a terminal shows it: dates by their fallback, mentions as @id, no bold or italics, entities decoded. */
export function plainText(mrkdwn: string): string {
  return mrkdwn
    .replace(/<!date\^\d+\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<@([A-Z0-9_]+)>/g, '@$1')
    .replace(/<!(channel|here|everyone)>/g, '@$1')
    .replace(/<(https?:\/\/[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/(^|[\s(])\*([^*\n]+)\*(?=[\s.,:;)!?]|$)/g, '$1$2')
    .replace(/(^|[\s(])_([^_\n]+)_(?=[\s.,:;)!?]|$)/g, '$1$2')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines;
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const hhmm = (d: Date) => d.toISOString().slice(11, 16);
const hhmmss = (d: Date) => d.toISOString().slice(11, 19);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function span(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h ? `${h}h ${String(m).padStart(2, '0')}m` : `${m}m`;
}
