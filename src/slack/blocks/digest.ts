import { compactDuration, formatDuration, plural, zoneRangeText, zoneText } from '../../domain/durations.js';
import { silenceState } from '../../domain/silence.js';
import type { DigestFacts } from '../../services/digest-queries.js';
import { slackDate, userMention } from './format.js';
import { escapeMrkdwn, LIMITS, mrkdwn, omittedNote, packLines, plain, safeText } from './limits.js';
import type { Block } from './types.js';

/** The digest as posted (Slack) and as mailed (plain text). */
export interface Digest {
  text: string;
  blocks: Block[];
  /** The same content without Slack markup, for email. */
  plainText: string;
  subject: string;
}

/** The median of a list of durations (the mean of the middle two for an even count); undefined when empty. */
export function median(values: readonly number[]): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Is there anything to say? A quiet period sends nothing. */
export function digestHasNews(f: DigestFacts): boolean {
  return (f.storms?.length ?? 0) + f.open.length + f.flapped.length + f.noisiest.length + f.opened + f.resolvedMs.length + f.silenced.length + f.maintenance.length + (f.slow?.length ?? 0) + (f.heldBack?.length ?? 0) > 0;
}

interface Section {
  title: string;
  lines: { slack: string; plain: string }[];
}

// safeText escapes (and cuts): escaping its result again would show `&amp;` where the name has `&`.
const name = (workflow: string) => ({ slack: `*${safeText(workflow, 100)}*`, plain: workflow });

function sections(f: DigestFacts): Section[] {
  const at = f.until;
  const tz = f.timeZone ?? 'UTC';
  const time = (d: Date) => zoneText(d, tz);
  const out: Section[] = [];
  const open = f.open.map((a) => {
    const ms = at.getTime() - a.openedAt.getTime();
    const owner = a.owner ? `owned by ${userMention(a.owner)}` : 'unowned';
    const silenced = silenceState({ status: 'open', silencedBy: a.silencedBy, silencedUntil: a.silencedUntil }, at).silenced ? ', silenced' : '';
    const w = name(a.workflow);
    return { slack: `${w.slack}: ${a.severity}, open ${compactDuration(ms)}, ${owner}${silenced}`, plain: `${w.plain}: ${a.severity}, open ${formatDuration(ms)}, ${a.owner ? `owned by ${a.owner}` : 'unowned'}${silenced}` };
  });
  if (open.length) out.push({ title: `Broken now (${open.length})`, lines: open });
  const held = (f.heldBack ?? []).map((h) => {
    const counts = [h.failures ? plural(h.failures, 'failure') : '', h.missed ? plural(h.missed, 'missed tick') : ''].filter(Boolean).join(', ');
    return line(h.workflow, `upstream-blocked by ${h.upstream}${counts ? ` (${counts})` : ''}${h.stillBlocked ? ', still blocked' : ', upstream since recovered'}`);
  });
  if (held.length) out.push({ title: 'Held back by an upstream incident', lines: held });
  if (f.flapped.length) {
    out.push({ title: 'Flapped', lines: f.flapped.map((x) => line(x.workflow, `flapping since ${time(x.since)}${x.open ? ', still open' : ', since resolved'}`)) });
  }
  if (f.slow?.length) {
    out.push({ title: 'Too slow', lines: f.slow.map((x) => line(x.workflow, `${x.kind === 'running_long' ? 'running long' : 'missed its completion deadline'} at ${time(x.at)}`)) });
  }
  if (f.noisiest.length) out.push({ title: 'Noisiest workflows', lines: f.noisiest.map((n) => line(n.workflow, plural(n.failed, 'failed run'))) });
  const mid = median(f.resolvedMs);
  const counts = (duration: (ms: number) => string) => `${plural(f.opened, 'alert')} opened, ${f.resolvedMs.length} resolved${mid === undefined ? '' : ` (median time to resolve ${duration(mid)})`}`;
  if (f.opened || f.resolvedMs.length) out.push({ title: 'Alerts', lines: [{ slack: counts(compactDuration), plain: counts(formatDuration) }] });
  if (f.storms?.length) {
    const storms = f.storms.map((x) => {
      const what = `storm at ${time(x.startedAt)}: ${plural(x.alerts, 'alert')} at once, told as one message${x.endedAt && x.endedAt <= at ? `, ended ${time(x.endedAt)}` : ', still under way'}`;
      return { slack: escapeMrkdwn(what), plain: what };
    });
    out.push({ title: 'Storms', lines: storms });
  }
  const quiet = [
    ...f.silenced.map((s) => {
      const when = s.endedAt ? zoneRangeText(s.from, s.endedAt, tz) : s.until ? `until ${time(s.until)}` : 'until resolved';
      return line(s.workflow, `silenced ${when}${s.reason ? `: ${s.reason}` : ''}`);
    }),
    ...f.maintenance.map((m) => {
      const what = `maintenance ${zoneRangeText(m.startsAt, m.endsAt, tz)}${m.reason ? `: ${m.reason}` : ''}`;
      return m.workflow ? line(m.workflow, what) : { slack: `Whole tenant: ${safeText(what, 400)}`, plain: `Whole tenant: ${what}` };
    }),
  ];
  if (quiet.length) out.push({ title: 'Silenced or in maintenance', lines: quiet });
  return out;
}

function line(workflow: string, what: string): { slack: string; plain: string } {
  const w = name(workflow);
  return { slack: `${w.slack}: ${safeText(what, 400)}`, plain: `${w.plain}: ${what}` };
}

/**
 * The tenant's digest for (since, until]: broken now, flapped, noisiest,
 * opened and resolved with the median time to resolve, silenced or in
 * maintenance. Undefined when there is nothing to say. Pure.
 */
export function buildDigest(f: DigestFacts): Digest | undefined {
  if (!digestHasNews(f)) return undefined;
  const parts = sections(f);
  // Durations in Slack are compact ("1d"), in the mail in words ("1 day").
  const heading = (duration: (ms: number) => string) => `Digest for ${f.tenant.name}, ${duration(f.until.getTime() - f.since.getTime())} to ${zoneText(f.until, f.timeZone ?? 'UTC')}`;
  const blocks: Block[] = [
    { type: 'header', text: plain(heading(compactDuration), LIMITS.headerText) },
    { type: 'context', elements: [mrkdwn(`Since ${slackDate(f.since)}, until ${slackDate(f.until)}`)] },
  ];
  blocks.push(...sectionBlocks(parts, LIMITS.messageBlocks - blocks.length));
  const summary = `${f.open.length} broken now, ${f.flapped.length} flapped, ${f.opened} opened, ${f.resolvedMs.length} resolved, ${f.silenced.length + f.maintenance.length} silenced or in maintenance`;
  const plainText = [heading(formatDuration), '', ...parts.flatMap((s) => [s.title, ...s.lines.map((l) => `- ${l.plain}`), ''])].join('\n');
  // The notification text is parsed by Slack like mrkdwn: the tenant's name is escaped there.
  return { text: `${escapeMrkdwn(heading(compactDuration))}: ${summary}`, blocks, plainText, subject: heading(formatDuration) };
}

/**
 * Every section within `budget` blocks: each keeps its title, the sections
 * that fit keep all their lines, and the room left is shared among the long
 * ones, each ending with "… N more not shown" (a night of 500 open alerts
 * must not push the counts, the storms and the silences out of the message).
 * The mail (plainText) has no such limit and lists everything.
 */
function sectionBlocks(parts: Section[], budget: number): Block[] {
  const packed = parts.map((s) => packLines(s.lines.map((l) => `• ${l.slack}`)));
  // Blocks each section gets, shortest need first: what it needs, or its fair share of what is left.
  const room = new Map<number, number>();
  let left = budget;
  const order = packed.map((p, i) => i).sort((a, b) => packed[a]!.length - packed[b]!.length);
  order.forEach((i, n) => {
    const share = Math.floor(left / (order.length - n));
    room.set(i, Math.min(1 + packed[i]!.length, share));
    left -= room.get(i)!;
  });
  return parts.flatMap((s, i) => {
    const packs = packed[i]!;
    const title: Block = { type: 'section', text: mrkdwn(`*${s.title}*`) };
    const fits = room.get(i)! - 1;
    if (packs.length <= fits) return [title, ...packs.map(section)];
    const kept = packs.slice(0, Math.max(0, fits - 1));
    const shown = kept.reduce((n, p) => n + p.length, 0);
    return [title, ...kept.map(section), omittedNote(s.lines.length - shown)];
  });
}

const section = (lines: string[]): Block => ({ type: 'section', text: mrkdwn(lines.join('\n')) });
