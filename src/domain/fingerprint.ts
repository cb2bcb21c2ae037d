import { createHash } from 'node:crypto';
import { TOO_FAST } from './run-duration.js';
import { ANSI_ESCAPES } from './error-line.js';

const WEEKDAY = '(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*';
const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

/** An IPv6 address (a `::`, or eight groups; a digit somewhere, so `abc::def` is no address) as one placeholder. */
function ipv6OrAsIs(match: string): string {
  const colons = match.split(':').length - 1;
  const address = !match.includes(':::') && /\d/.test(match) && (match.includes('::') ? colons <= 7 : colons === 7);
  return address ? '<ip>' : match;
}

/** Kubernetes' alphabet for generated names: no vowels, so no word, and no 0, 1, 3. */
const K8S_RANDOM = /^[bcdfghjklmnpqrstvwxz2456789]+$/;

/**
 * A pod's name with its random suffix as one placeholder: five of Kubernetes' characters after a CronJob's
 * scheduled minute (`nightly-export-28473829-xkq2p`) or a ReplicaSet's hash (`web-7d4b9c8f6d-x2kqp`), or with a
 * digit among them (a Job's `migrate-x7k2p`); five consonants alone may be a word's abbreviation (`backend-https`).
 */
function podNameOrAsIs(name: string): string {
  const parts = name.split('-');
  const last = parts.at(-1)!;
  if (last.length !== 5 || !K8S_RANDOM.test(last)) return name;
  const before = parts.at(-2)!;
  const replicaSetHash = parts.length > 2 && before.length >= 6 && before.length <= 10 && K8S_RANDOM.test(before) && !/^\d+$/.test(before);
  if (!replicaSetHash && !(parts.length > 2 && /^\d{6,}$/.test(before)) && !/\d/.test(last)) return name;
  // A ReplicaSet's hash changes with every rollout: the same error across one is one group.
  return [...parts.slice(0, replicaSetHash ? -2 : -1), '<pod>'].join('-');
}

/** Where the quoted values are replaced among the rules (replaceQuoted). */
const QUOTED = Symbol('quoted');

/**
 * Error groups (DESIGN.md, core idea 9): the same failure with a different
 * row id, timestamp or temp path is the same group. Order matters: the most
 * specific shapes are replaced first, so a UUID is not eaten digit by digit.
 */
const RULES: ([RegExp, string | ((match: string) => string)] | typeof QUOTED)[] = [
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/gi, '<ts>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<date>'],
  // Dates in words, with a time or a year so that "may 5 retries" stays: syslog's `Mar 10 02:03:11`, `date`'s
  // `Tue Mar 10 02:03:11`, HTTP's `Tue, 10 Mar 2026`: else a new month (or weekday) is a new group.
  [new RegExp(`\\b(?:${WEEKDAY},?\\s+)?(?:${MONTH}\\.?\\s+\\d{1,2}(?:(?:,?\\s+\\d{4})?\\s+\\d{1,2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?|,?\\s+\\d{4})|\\d{1,2}\\s+${MONTH}\\.?,?\\s+\\d{4})\\b`, 'g'), '<date>'],
  // IPv6 (before times: `fe80::12:34:56` holds one), whose letters would otherwise make every address a group.
  [/(?<![\w:.])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:(?<=:)(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])/g, ipv6OrAsIs],
  [/\b\d{2}:\d{2}:\d{2}(\.\d+)?\b/g, '<time>'],
  // Kubernetes' generated names: a pod's random five (`nightly-export-28473829-xkq2p`, `web-7d4b9c8f6d-x2kqp`).
  [/\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b/g, podNameOrAsIs],
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
  /** The closing quote, when it is another character. */
  close?: string;
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

/** Typographic quotes (GCC's `‘foo’ undeclared`): a value between them, no escapes. */
const CURLY: QuoteRule[] = [
  ['\u2018', '\u2019'],
  ['\u201c', '\u201d'],
].map(([open, close]) => ({ quote: open!, close: close!, opens: () => true, body: new RegExp(`[^${close}]*`, 'y'), closes: () => true, to: `${open}<q>${close}` }));

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

const QUOTE_RULES: readonly QuoteRule[] = [DOUBLE, SINGLE, ...CURLY];

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
    if (text[end] === (rule.close ?? rule.quote) && rule.closes(text, end)) {
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
  // Colour codes are how a terminal shows the error, not part of it; one text in either Unicode form is one text.
  let out = text.normalize('NFC').replace(ANSI_ESCAPES, '').replace(RANDOM_TOKEN, randomTokenOrAsIs).trim().toLowerCase();
  for (const rule of RULES) out = rule === QUOTED ? QUOTE_RULES.reduce(replaceQuoted, out) : out.replace(rule[0], rule[1] as string);
  return out.replace(/\s+/g, ' ');
}


/**
 * A random token in base64 or alike (S3's `Extended Request ID: vlR7PnpV2Ce81…=`, a CloudFront id): long, with
 * upper and lower case letters and digits, read before lowercasing. Told from a CamelCase name
 * (`AmazonS3ClientBuilderException`) by how often it changes between them: a name does so once a word, a
 * random token at every other character or so.
 */
const RANDOM_TOKEN = /(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}(?![\w+/=-])/g;

function randomTokenOrAsIs(token: string): string {
  const classes = [...token].map((c) => (/[a-z]/.test(c) ? 'l' : /[A-Z]/.test(c) ? 'u' : /\d/.test(c) ? 'd' : ''));
  if (!classes.includes('l') || !classes.includes('u') || !classes.includes('d')) return token;
  let changes = 0;
  for (let i = 1; i < classes.length; i++) if (classes[i] && classes[i - 1] && classes[i] !== classes[i - 1]) changes++;
  return changes >= token.length * 0.4 ? '<id>' : token;
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

const TOO_FAST_GROUP = fingerprintError(TOO_FAST);

/**
 * What an open alert's thread is told of a failure recorded in it, beyond
 * its count on the root: a group new to the alert is called out once
 * (`error_group_changed`), and when that new group is "too fast" (a success
 * that counted as a failure), the call-out is the "Too fast to be real"
 * reply, which says why. A too-fast run in an alert that carries the group
 * already (or opened with it: its root's last error says "too fast") is
 * counted only: a five-minute check returning at once posted a reply every
 * five minutes. Pure.
 */
export function failureNotes(failure: { errorGroup: string | null }, groupChanged: { seenBefore?: boolean } | null): ('error_group_changed' | 'too_fast')[] {
  if (!groupChanged || groupChanged.seenBefore) return [];
  return [failure.errorGroup === TOO_FAST_GROUP ? 'too_fast' : 'error_group_changed'];
}
