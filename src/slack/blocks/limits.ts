/**
 * Block Kit's limits and the escaping of untrusted text, in one place. Every
 * builder goes through here: text from runs (errors, stages, log lines,
 * notes) is escaped so it cannot mention `<!channel>`, a user `<@U…>`, or
 * hide a link `<http…|…>`, and is cut to fit with a visible marker.
 */
import { cutText, wellFormed } from '../../domain/text.js';
import type { Block } from './types.js';

export const LIMITS = {
  messageBlocks: 50,
  surfaceBlocks: 100,
  sectionText: 3000,
  headerText: 150,
  contextElementText: 2000,
  contextElements: 10,
  buttonText: 75,
  buttonValue: 2000,
  id: 255,
  optionText: 75,
  modalTitle: 24,
  fallbackText: 3000,
  codeBlock: 2800,
} as const;

export const TRUNCATION_MARKER = '… [truncated]';

/** Neutralises mrkdwn control sequences: `&`, `<`, `>` are all Slack parses specially; a lone surrogate becomes U+FFFD. */
export function escapeMrkdwn(text: string): string {
  return wellFormed(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cuts `text` to at most `max` characters, ending with the marker when cut (never inside a surrogate pair). */
export function truncate(text: string, max: number, marker = TRUNCATION_MARKER): string {
  if (text.length <= max) return text;
  if (max <= marker.length) return marker.slice(0, max);
  return cutText(text, max - marker.length) + marker;
}

/**
 * Escaped and cut to `max` escaped characters. Cutting happens on the raw text
 * so an entity (`&amp;`) is never split in half.
 */
export function safeText(raw: string, max: number): string {
  const escaped = escapeMrkdwn(raw);
  if (escaped.length <= max) return escaped;
  const room = Math.max(0, max - TRUNCATION_MARKER.length);
  let out = '';
  for (const ch of raw) {
    const e = escapeMrkdwn(ch);
    if (out.length + e.length > room) break;
    out += e;
  }
  return out + TRUNCATION_MARKER.slice(0, max - out.length);
}

/**
 * Inline code of untrusted text that cannot end its own span: mrkdwn has no
 * escape for a backtick, so each becomes a look-alike (ʼ), and line breaks
 * (which end a span too) become spaces; escaped and cut to `max` characters
 * inside the span.
 */
export function codeSpan(raw: string, max: number = LIMITS.sectionText - 2): string {
  return '`' + safeText(raw.replace(/`/g, 'ʼ').replace(/\s+/g, ' '), max) + '`';
}

/** A fenced code block of untrusted text that cannot close its own fence. */
export function codeBlock(raw: string, max: number = LIMITS.codeBlock): string {
  const defused = raw.replace(/```/g, '`\u200b`\u200b`');
  return '```' + safeText(defused, max - 6) + '```';
}

/** Plain text (headers, buttons, options): no escaping needed, only the length. */
export function plain(text: string, max: number): { type: 'plain_text'; text: string; emoji: true } {
  return { type: 'plain_text', text: truncate(wellFormed(text), max), emoji: true };
}

/**
 * A mrkdwn text object, `verbatim`: Slack still renders the markup and the
 * tokens the builders write on purpose (`<@U…>`, `<!subteam^…>`, `<!date…>`,
 * `<url|label>`), but no longer rewrites plain text: a URL in an error is not
 * made a link, `#general` in a stage name not a channel link, a bare
 * `@channel` or `@here` in a note not a mention (Slack's text object docs:
 * with verbatim false, "URLs will be auto-converted into links, conversation
 * names will be link-ified, and certain mentions will be automatically
 * parsed"). Escaping (escapeMrkdwn) covers the `<…>` tokens; this covers the rest.
 */
export function mrkdwn(text: string, max: number = LIMITS.sectionText): { type: 'mrkdwn'; text: string; verbatim: true } {
  return { type: 'mrkdwn', text: cutMrkdwn(text, max), verbatim: true };
}

/**
 * Spans of mrkdwn that must stay whole: fenced blocks, `code` spans, angle
 * tokens (<!date^…|…>, <@U…>, <!subteam^…>, <url|label>) and entities (&amp;).
 */
const MARKUP = /```[\s\S]*?```|`[^`\n]*`|<[^<>\n]*>|&(?:[a-z]+|#\d+);/g;

/**
 * Cuts mrkdwn to at most `max` characters without breaking its markup: the
 * cut never lands inside a code span, a date token, a link, a mention or an
 * entity (it moves back to before it), and a fenced block cut in its middle
 * is closed again. Ends with the marker when cut.
 */
export function cutMrkdwn(text: string, max: number, marker = TRUNCATION_MARKER): string {
  if (text.length <= max) return text;
  if (max <= marker.length) return marker.slice(0, max);
  let cut = max - marker.length;
  for (const m of text.matchAll(MARKUP)) {
    const start = m.index;
    const end = start + m[0].length;
    if (start >= cut) break;
    if (end <= cut) continue;
    // The cut falls inside this span.
    if (m[0].startsWith('```') && cut - start > 6) {
      // Keep what fits of the block's content, then close the fence: the reader still sees the start of the error.
      let inner = cutText(text, cut - 3).slice(start);
      const entity = /&[a-z#0-9]*$/.exec(inner);
      if (entity) inner = inner.slice(0, entity.index);
      return `${text.slice(0, start)}${inner}\`\`\`${marker}`;
    }
    cut = start;
    break;
  }
  return cutText(text, cut) + marker;
}

/**
 * Packs lines (one list item each) into section texts: at most `maxLines` a
 * section and never more than the section limit, a line never split
 * between two sections. A single line longer than a section is cut safely.
 */
export function packLines(lines: string[], maxLines = 10, maxChars: number = LIMITS.sectionText): string[][] {
  const packs: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const raw of lines) {
    const line = cutMrkdwn(raw, maxChars);
    if (current.length && (current.length >= maxLines || size + 1 + line.length > maxChars)) {
      packs.push(current);
      current = [];
      size = 0;
    }
    size += (current.length ? 1 : 0) + line.length;
    current.push(line);
  }
  if (current.length) packs.push(current);
  return packs;
}

/** Sections of list lines, each remembering how many items it shows, for capBlocks' count. */
export function lineSections(lines: string[], maxLines = 10): Block[] {
  return packLines(lines, maxLines).map((pack) => withItems({ type: 'section', text: mrkdwn(pack.join('\n')) }, pack.length));
}

const ITEMS = new WeakMap<object, number>();

/** Marks a block as showing `count` list items (alerts, runs, workflows): "… N more not shown" counts these. */
export function withItems<T extends object>(block: T, count: number): T {
  ITEMS.set(block, count);
  return block;
}

export function checkId(id: string): string {
  if (id.length > LIMITS.id) throw new Error(`Block Kit id longer than ${LIMITS.id} characters: ${id.slice(0, 40)}…`);
  return id;
}

/**
 * Keeps a surface within its block budget: when over, the last block says
 * how many items were left out (the list items of the dropped blocks, see
 * withItems; a block not marked counts as one), so nothing disappears silently.
 */
export function capBlocks<T extends object>(blocks: T[], max: number, overflow: (omitted: number) => T): T[] {
  if (blocks.length <= max) return blocks;
  const kept = blocks.slice(0, max - 1);
  const omitted = blocks.slice(max - 1).reduce((n, b) => n + (ITEMS.get(b) ?? (isDecoration(b) ? 0 : 1)), 0);
  return omitted > 0 ? [...kept, overflow(omitted)] : kept;
}

/** Dividers and headers of a dropped group are not items of their own. */
function isDecoration(b: object): boolean {
  return (b as { type?: unknown }).type === 'divider' || (b as { type?: unknown }).type === 'header';
}

/** The "… N more not shown" context block. */
export function omittedNote(omitted: number): Block {
  return { type: 'context', elements: [mrkdwn(`… ${omitted} more not shown`)] };
}
