/**
 * Block Kit's limits and the escaping of untrusted text, in one place. Every
 * builder goes through here: text from runs (errors, stages, log lines,
 * notes) is escaped so it cannot mention `<!channel>`, a user `<@U…>`, or
 * hide a link `<http…|…>`, and is cut to fit with a visible marker.
 */
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

/** Neutralises mrkdwn control sequences: `&`, `<`, `>` are all Slack parses specially. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cuts `text` to at most `max` characters, ending with the marker when cut. */
export function truncate(text: string, max: number, marker = TRUNCATION_MARKER): string {
  if (text.length <= max) return text;
  if (max <= marker.length) return marker.slice(0, max);
  return text.slice(0, max - marker.length) + marker;
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

/** A fenced code block of untrusted text that cannot close its own fence. */
export function codeBlock(raw: string, max: number = LIMITS.codeBlock): string {
  const defused = raw.replace(/```/g, '`\u200b`\u200b`');
  return '```' + safeText(defused, max - 6) + '```';
}

/** Plain text (headers, buttons, options): no escaping needed, only the length. */
export function plain(text: string, max: number): { type: 'plain_text'; text: string; emoji: true } {
  return { type: 'plain_text', text: truncate(text, max), emoji: true };
}

export function mrkdwn(text: string, max: number = LIMITS.sectionText): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: truncate(text, max) };
}

export function checkId(id: string): string {
  if (id.length > LIMITS.id) throw new Error(`Block Kit id longer than ${LIMITS.id} characters: ${id.slice(0, 40)}…`);
  return id;
}

/**
 * Keeps a surface within its block budget: when over, the last block says
 * how many were left out, so nothing disappears silently.
 */
export function capBlocks<T>(blocks: T[], max: number, overflow: (omitted: number) => T): T[] {
  if (blocks.length <= max) return blocks;
  const kept = blocks.slice(0, max - 1);
  return [...kept, overflow(blocks.length - kept.length)];
}
