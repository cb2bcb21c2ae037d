import { createHash } from 'node:crypto';
import { TOO_FAST } from './run-duration.js';

/**
 * Error groups (DESIGN.md, core idea 9): the same failure with a different
 * row id, timestamp or temp path is the same group. Order matters: the most
 * specific shapes are replaced first, so a UUID is not eaten digit by digit.
 */
const RULES: [RegExp, string][] = [
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/gi, '<ts>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  [/\b\d{2}:\d{2}:\d{2}(\.\d+)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // Hex ids (commit shas, object ids): at least 8 hex characters with a digit in them.
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  [/"(?:[^"\\]|\\.)*"/g, '"<q>"'],
  // A single quote opens a value only where no word goes on before it, and closes only where none follows:
  // an apostrophe inside a word (can't, job's) is no quote, else "can't …, won't retry" would swallow the error between.
  [/(?<!\w)'(?:[^'\\]|\\.|(?<=\w)'(?=\w))*'(?!\w)/g, "'<q>'"],
  [/`[^`]*`/g, '`<q>`'],
  [/(?:[A-Za-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g, '<path>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
];

/** The error text with its variable parts replaced by placeholders. */
export function normaliseError(text: string): string {
  let out = text.trim().toLowerCase();
  for (const [re, to] of RULES) out = out.replace(re, to);
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
