import { createHash } from 'node:crypto';
import { TOO_FAST } from './run-duration.js';

/** Where the quoted values are replaced among the rules (replaceQuoted). */
const QUOTED = Symbol('quoted');

/**
 * Error groups (DESIGN.md, core idea 9): the same failure with a different
 * row id, timestamp or temp path is the same group. Order matters: the most
 * specific shapes are replaced first, so a UUID is not eaten digit by digit.
 */
const RULES: ([RegExp, string] | typeof QUOTED)[] = [
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/gi, '<ts>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  [/\b\d{2}:\d{2}:\d{2}(\.\d+)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // Hex ids (commit shas, object ids): at least 8 hex characters with a digit in them.
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  QUOTED,
  [/`[^`]*`/g, '`<q>`'],
  [/(?:[A-Za-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g, '<path>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
];

interface QuoteRule {
  quote: string;
  /** Whether a quote at `i` may open a value. */
  opens: (text: string, i: number) => boolean;
  /** What a value's body may hold, from where it starts: sticky, so it is matched there and nowhere else. */
  body: RegExp;
  /** Whether the quote at `i`, where the body stopped, closes the value. */
  closes: (text: string, i: number) => boolean;
  to: string;
}

const WORD = /\w/;
const isWord = (text: string, i: number) => i >= 0 && i < text.length && WORD.test(text[i]!);

/** `"…"` with backslash escapes. */
const DOUBLE: QuoteRule = { quote: '"', opens: () => true, body: /(?:[^"\\]|\\.)*/y, closes: () => true, to: '"<q>"' };

/**
 * `'…'`: a single quote opens a value only where no word goes on before it, and closes only where none follows:
 * an apostrophe inside a word (can't, job's) is no quote, else "can't …, won't retry" would swallow the error between.
 */
const SINGLE: QuoteRule = {
  quote: "'",
  opens: (text, i) => !isWord(text, i - 1),
  body: /(?:[^'\\]|\\.|(?<=\w)'(?=\w))*/y,
  closes: (text, i) => !isWord(text, i + 1),
  to: "'<q>'",
};

/**
 * Quoted values replaced, in one pass over the text. What the regular
 * expression `"(?:[^"\\]|\\.)*"` (and its single-quote form) replaces, but
 * linear: that expression, tried at every quote of a text like `"\"\"\"…`
 * whose value never closes, reads on to the end from each of them, so 10,000
 * characters of a reported error cost a tenth of a second and 200,000
 * minutes of the poller's time. A body stops at the first character it
 * cannot hold; the value closes there or not at all, and every quote the
 * failed body passed over (an escaped one) would stop at the same place, so
 * the search goes on from there.
 */
function replaceQuoted(text: string, rule: QuoteRule): string {
  let out = '';
  let from = 0;
  let i = text.indexOf(rule.quote);
  while (i !== -1) {
    if (!rule.opens(text, i)) {
      i = text.indexOf(rule.quote, i + 1);
      continue;
    }
    rule.body.lastIndex = i + 1;
    rule.body.exec(text);
    const end = rule.body.lastIndex;
    if (text[end] === rule.quote && rule.closes(text, end)) {
      out += text.slice(from, i) + rule.to;
      from = end + 1;
      i = text.indexOf(rule.quote, from);
    } else {
      i = text.indexOf(rule.quote, end);
    }
  }
  return out + text.slice(from);
}

/** The error text with its variable parts replaced by placeholders. */
export function normaliseError(text: string): string {
  let out = text.trim().toLowerCase();
  for (const rule of RULES) out = rule === QUOTED ? replaceQuoted(replaceQuoted(out, DOUBLE), SINGLE) : out.replace(rule[0], rule[1]);
  return out.replace(/\s+/g, ' ');
}

/** A stable short id for an error's group: 12 hex of the SHA-1 of its normalised text. */
export function fingerprintError(text: string | null | undefined): string | null {
  if (!text || !text.trim()) return null;
  return createHash('sha1').update(normaliseError(text), 'utf8').digest('hex').slice(0, 12);
}

/** What the poller knows of a finished run when it groups it. */
export interface GroupedOutcome {
  status: string;
  error: string | null;
  /** A success with fewer rows than the policy's minRows (core idea 8): a failure of its own kind. */
  emptyOutput?: boolean;
  /** A success faster than the policy's minDurationSeconds (issue 16): one group whatever the numbers. */
  tooFast?: boolean;
}

/**
 * The error group of a finished run, decided once, where every finished run
 * passes (the poller's claim: reported, launched, timed out, worker lost and
 * missed alike). Successes and skipped ticks have none; a missed tick is one
 * group whatever its window; empty output is one group whatever the counts;
 * a failure without a message is grouped as such.
 */
export function errorGroupOf(outcome: GroupedOutcome): string | null {
  if (outcome.emptyOutput) return fingerprintError('empty output');
  if (outcome.tooFast) return fingerprintError(TOO_FAST);
  if (outcome.status === 'missed') return fingerprintError('missed');
  if (outcome.status !== 'failed') return null;
  return fingerprintError(outcome.error?.trim() ? outcome.error : 'failed without an error message');
}
