import type { z } from 'zod';
import { meantName } from './file-checks.js';
import { formatPath, locateJsonPaths, valueAt } from './json-locate.js';
import { shownPingKey } from '../domain/ping-keys.js';

/**
 * Problems of a JSON document (the workflows file, an API body, a replay
 * scenario) as the lines an operator reads: file and line, path, message and
 * the value at fault, never a secret's value.
 */

/**
 * For a refinement that reads only fields present whatever their shape (a
 * managed workflow without a launcher, "secret" and "secretEnv" both
 * given): run it even when another field of the object failed, which zod
 * skips by default, so the operator learns of every problem of an entry at once.
 */
export const alsoBesideShapeProblems = {
  when: (payload: { value: unknown }) => payload.value !== null && typeof payload.value === 'object' && !Array.isArray(payload.value),
};

/** Fields whose values an error message must not repeat. */
const SECRET_FIELDS = new Set(['secret', 'routingKey']);

/**
 * One line per problem: `file:line: path: message (got value)`. With the
 * document's `schema`, an unknown field within a typo of a known one says
 * which (`unknown field "dependOn" (did you mean "dependsOn"?)`), as an
 * unknown workflow or tenant name does.
 */
export function describeIssues(source: string, text: string | undefined, root: unknown, issues: readonly z.core.$ZodIssue[], schema?: z.ZodType): string[] {
  const lines = text ? locateJsonPaths(text) : new Map<string, number>();
  return withoutSafeIntegerEcho(issues).map((issue) => {
    const path = formatPath(issue.path);
    let line = lines.get(path);
    for (let p = [...issue.path]; line === undefined && p.length > 0; p = p.slice(0, -1)) line = lines.get(formatPath(p.slice(0, -1)));
    const where = `${source}${line ? `:${line}` : ''}`;
    // A header's value may be a credential (Authorization, an API key): only its name is shown, in the path.
    // So may a command launcher's environment value (DB_PASSWORD), and a URL's user:password or query.
    const parent = issue.path[issue.path.length - 2];
    const last = String(issue.path[issue.path.length - 1]);
    const hidden = SECRET_FIELDS.has(last) || (issue.path.length >= 2 && (parent === 'headers' || parent === 'env'));
    const given = valueAt(root, issue.path);
    // A secret left out has nothing to hide: "(got "(hidden)")" would say it was given.
    const value = given === undefined ? undefined : hidden ? '(hidden)' : last === 'url' ? withoutUrlSecrets(given) : last === 'pingKey' ? shownPingKey(given) : given;
    // 1e400 parses to Infinity, which JSON.stringify writes as null: the value was not null.
    const shown = typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value);
    const got = value === undefined ? '' : ` (got ${truncate(shown, 120)})`;
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      const known = schema ? fieldsAt(schema, issue.path) : [];
      message = `unknown field ${issue.keys.map((k) => `"${k}"${hintFor(k, known)}`).join(', ')}`;
    }
    // zod says "expected string, received undefined" of a field left out: say it is required.
    else if (isMissing(root, issue.path)) message = issue.code === 'invalid_value' || issue.code === 'invalid_union' ? `required: ${issue.message}` : issue.code === 'invalid_type' ? 'required' : message;
    // zod's "expected int, received number" of 1.5: say what is wanted.
    else if (issue.code === 'invalid_type' && issue.expected === 'int') message = 'must be a whole number';
    return `${where}: ${path || '(root)'}: ${message}${issue.code === 'unrecognized_keys' ? '' : got}`;
  });
}

/** Names other schedulers (crontab tools, Airflow, Kubernetes) give a field, and ours, where ours is a field of the same object. */
const OTHER_NAMES: Record<string, string> = {
  schedule: 'cron',
  crontab: 'cron',
  tz: 'timezone',
  time_zone: 'timezone',
  retry: 'retries',
  max_retries: 'retries',
  maxRetries: 'retries',
  timeout: 'timeoutSeconds',
  grace: 'graceSeconds',
  depends_on: 'dependsOn',
  command: 'launcher',
};

function hintFor(key: string, known: readonly string[]): string {
  const ours = Object.hasOwn(OTHER_NAMES, key) ? OTHER_NAMES[key] : undefined;
  if (ours !== undefined && known.includes(ours)) return ours === 'launcher' ? ' (did you mean "launcher": {"kind": "command", "command": …}?)' : ` (did you mean "${ours}"?)`;
  const meant = meantName(key, known);
  return meant !== undefined ? ` (did you mean "${meant}"?)` : '';
}

type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[]; valueType?: z.ZodType; getter?: () => z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * The fields the schema knows for the object at `path` (every option's, for
 * a union): walked through wrappers (optional, default, pipe…), arrays and records.
 */
function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in ?? (def.type === 'lazy' ? def.getter?.() : undefined);
  if (inner && def.type !== 'array' && def.type !== 'record') return fieldsAt(inner, path);
  if (def.type === 'union') return [...new Set((def.options ?? []).flatMap((o) => fieldsAt(o, path)))];
  if (path.length === 0) return def.type === 'object' ? Object.keys(def.shape ?? {}) : [];
  const [head, ...rest] = path;
  if (def.type === 'object') {
    const field = def.shape?.[String(head)];
    return field ? fieldsAt(field, rest) : [];
  }
  if (def.type === 'array' && def.element) return fieldsAt(def.element, rest);
  if (def.type === 'record' && def.valueType) return fieldsAt(def.valueType, rest);
  return [];
}

/** Whether the path names a field its object does not have. */
function isMissing(root: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return root === undefined;
  const parent = valueAt(root, path.slice(0, -1));
  return parent !== null && typeof parent === 'object' && !Array.isArray(parent) && !(path[path.length - 1]! in parent);
}

/** A URL as it may be shown: its user:password and query values replaced with `***`. */
function withoutUrlSecrets(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1***@').replace(/([?&][^=&#]*=)[^&#]*/g, '$1***');
}

/**
 * `not valid JSON: … at position 131` with the line it is on, which Node 20's
 * message leaves out; one line always (Node's `Unexpected token` quotes a
 * snippet of the file, newlines and all, and no position: the mistake is
 * found by parsing ever longer beginnings of the text). A file that reads as
 * YAML is told so: the workflows file is JSON only.
 */
export function jsonSyntaxProblem(source: string, text: string, error: unknown): string {
  if (looksLikeYaml(text)) return `${source}:1: not valid JSON: this looks like YAML; the workflows file is JSON only: convert it (for example \`yq -o=json . ${source}\`)`;
  const message = error instanceof Error ? error.message : String(error);
  const snippetOnly = /^(Unexpected token '[^]*?'), .* is not valid JSON$/s.exec(message);
  const at = /at position (\d+)/.exec(message)?.[1];
  const position = at !== undefined ? Number(at) : /end of JSON input/.test(message) ? text.length : snippetOnly ? firstBadCharacter(text) : undefined;
  const said = snippetOnly ? snippetOnly[1]!.replace(/\n/g, '\\n').replace(/\r/g, '\\r') : message.replace(/\s*\n\s*/g, ' ');
  if (position === undefined) return `${source}: not valid JSON: ${said}`;
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${source}:${line}: not valid JSON: ${said.replace(/ \(line \d+ column \d+\)$/, '')} (line ${line} column ${column})`;
}

/** Top-level `key:` or `- item` lines, or a `---` document start, where JSON would open with `{`. */
function looksLikeYaml(text: string): boolean {
  const first = text.split('\n').find((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  return first !== undefined && /^(---|- |[A-Za-z_][\w-]*\s*:(\s|$))/.test(first);
}

/** Where JSON.parse first fails: the shortest beginning of `text` that is wrong, not merely unfinished. */
function firstBadCharacter(text: string): number | undefined {
  const fine = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : '';
      const at = /at position (\d+)/.exec(message);
      return /end of JSON input/.test(message) || (at !== null && Number(at[1]) >= n);
    }
  };
  if (fine(text.length)) return undefined;
  let [lo, hi] = [0, text.length];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fine(mid)) lo = mid;
    else hi = mid;
  }
  return hi - 1;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * zod's `.int()` bounds a number to the safe integers itself, so 2^60 for a
 * field of at most 10 made two lines, the first naming a bound the field
 * does not have ("expected int to be <=9007199254740991"). That line is
 * dropped where the field's own bound on the same side says it.
 */
function withoutSafeIntegerEcho(issues: readonly z.core.$ZodIssue[]): readonly z.core.$ZodIssue[] {
  const key = (i: z.core.$ZodIssue) => `${i.code}|${formatPath(i.path)}`;
  const own = new Set(issues.filter((i) => (i.code === 'too_big' || i.code === 'too_small') && i.origin !== 'int').map(key));
  return issues.filter((i) => !((i.code === 'too_big' || i.code === 'too_small') && i.origin === 'int' && own.has(key(i))));
}
