import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { duplicateJsonKeys } from '../config/json-locate.js';
import { hasLoneSurrogate } from '../domain/text.js';
import { badRequest } from './api-error.js';

/**
 * A numeric id in a path (`/runs/{id}`, `/alerts/{id}`): a positive integer
 * in decimal digits without leading zeros, as the API writes them. Anything
 * else is a 400 naming it; `0` and `007` were looked up as ids.
 */
export function positiveId(what: string, raw: string | undefined): number {
  if (raw === undefined || !/^[1-9]\d{0,14}$/.test(raw)) throw badRequest(`path: ${what} id must be a positive integer without leading zeros (got ${JSON.stringify((raw ?? '').slice(0, 100))})`);
  return Number(raw);
}

/**
 * A path that cannot be decoded (`%ZZ`) or decodes to a NUL would reach
 * Express's parameter decoding (a URIError) or PostgreSQL (which cannot
 * store NUL) as a 500. Refused here, first, with a reason.
 */
export const checkPath: RequestHandler = (req, _res, next) => {
  let decoded: string;
  try {
    decoded = decodeURIComponent(req.path);
  } catch {
    throw badRequest(`path: bad percent-encoding in ${JSON.stringify(req.path.slice(0, 200))}`);
  }
  if (decoded.includes('\u0000')) throw badRequest('path: NUL characters (%00) are not allowed');
  next();
};

/** Output text a run reports: NULs and lone surrogates there are replaced when stored (storableOutcome, PostgreSQL), not refused. */
const OUTPUT_FIELDS = new Set(['error', 'log', 'stage']);

/** What is wrong with a string PostgreSQL cannot keep: a NUL anywhere, or a lone surrogate in a jsonb column (launcher headers, reasons). */
function badString(s: string): string | undefined {
  if (s.includes('\u0000')) return 'NUL characters (\\u0000) are not allowed';
  if (hasLoneSurrogate(s)) return 'a lone UTF-16 surrogate (half a character, such as \\ud800) is not allowed';
  return undefined;
}

function findBadString(value: unknown, path: string, depth = 0, replaced: ReadonlySet<string> = OUTPUT_FIELDS): { at: string; why: string } | undefined {
  if (typeof value === 'string') {
    const why = badString(value);
    return why ? { at: path, why } : undefined;
  }
  if (depth > 20 || value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const why = badString(k);
    if (why) return { at: `${path}.${JSON.stringify(k).slice(1, -1)}`, why };
    if (depth === 0 && replaced.has(k)) continue;
    const found = findBadString(v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`, depth + 1, replaced);
    if (found) return found;
  }
  return undefined;
}

/**
 * The first string in a parsed JSON value (keys too, 20 levels deep) that
 * PostgreSQL cannot store, as "<path>: <why>": a Slack payload's notes and
 * user ids reach text and jsonb columns, and a JSON escape (`\u0000`,
 * `\ud800`) puts there what the raw body does not show.
 */
export function unstorableStringIn(value: unknown, path: string): string | undefined {
  const found = findBadString(value, path, 0, new Set());
  return found ? `${found.at}: ${found.why}` : undefined;
}

/** The deepest nesting a body may have: a workflow needs about 5 levels (destinations[].events, launcher.headers). */
export const MAX_JSON_DEPTH = 32;

/**
 * The first structural problem of a body, as "<path>: <why>": a value nested
 * deeper than MAX_JSON_DEPTH, or a `__proto__` key. Walked without recursion:
 * 100,000 nested arrays fit in 256 KB, and every recursive walk after this
 * one (the schema's, the 400's "got" value) would overflow the stack, a 500.
 * JSON.parse keeps `"__proto__"` as a plain key, but a schema copying a
 * record (launcher `headers`, command `env`) assigns it, which sets the
 * copy's prototype instead: the key was dropped without a word (and an
 * object value became what every missing name of the copy reads).
 */
function structureProblem(body: unknown): string | undefined {
  const cut = (path: string) => (path.length > 200 ? `${path.slice(0, 200)}…` : path);
  const stack: [unknown, string, number][] = [[body, 'body', 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `${cut(path)}: nested deeper than ${MAX_JSON_DEPTH} levels`;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === '__proto__' && !Array.isArray(value)) return `${cut(path)}: "__proto__" is not allowed as a key`;
      stack.push([v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`, depth + 1]);
    }
  }
  return undefined;
}

const rawBodies = new WeakMap<IncomingMessage, string>();

/**
 * The body parser's `verify`: keeps the JSON text, for the duplicate-key
 * check below (JSON.parse keeps the last of `{"tenant": "a", "tenant": "b"}`
 * silently, and a proxy or a log that reads the first sees another request).
 */
export function keepJsonText(req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  rawBodies.set(req, body.toString(Buffer.isEncoding(encoding) ? encoding : 'utf8'));
}

/**
 * A body nested deeper than MAX_JSON_DEPTH, a `__proto__` key, a key given twice in one object, or a NUL or a lone surrogate in a
 * JSON string that names or configures something (ids, names, commands, URLs,
 * headers): 400 naming the field.
 */
export const checkJsonStrings: RequestHandler = (req, _res, next) => {
  const structure = structureProblem(req.body);
  if (structure) throw badRequest(structure);
  // After the depth check: the key walk recurses.
  const raw = rawBodies.get(req);
  const twice = raw ? duplicateJsonKeys(raw)[0] : undefined;
  if (twice) throw badRequest(`body.${twice.path}: "${twice.key}" is given twice in one object; JSON keeps only the last, so send it once`);
  const bad = findBadString(req.body, 'body');
  if (bad) throw badRequest(`${bad.at}: ${bad.why}`);
  next();
};

/** The same for query parameters (`?workflow=a%00b` reached PostgreSQL as a 500). */
export const checkQueryStrings: RequestHandler = (req, _res, next) => {
  for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
    const why = badString(k);
    if (why) throw badRequest(`query: ${why} in a parameter name`);
    const bad = findBadString(v, `query.${k}`, 1);
    if (bad) throw badRequest(`${bad.at}: ${bad.why}`);
  }
  next();
};
