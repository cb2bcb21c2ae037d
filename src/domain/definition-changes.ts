/**
 * The fields whose values differ between a stored definition and the one
 * about to be written, compared as JSON values: object keys in any order
 * (jsonb keeps its own), `undefined` the same as absent. A restart with an
 * unchanged file then finds nothing to write and says so.
 */
export function changedFields<T extends Record<string, unknown>>(stored: Partial<Record<keyof T, unknown>>, next: T): (keyof T & string)[] {
  return (Object.keys(next) as (keyof T & string)[]).filter((field) => canonicalJson(stored[field]) !== canonicalJson(next[field]));
}

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** At most `limit` names, then how many more: a log line stays one line when a whole file changed. */
export function fewNames(names: string[], limit = 20): string[] {
  return names.length <= limit ? names : [...names.slice(0, limit), `… and ${names.length - limit} more`];
}

/** A sync's counts, and the changed entries named with their fields (at most 20). */
export interface SyncSummary {
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  changed: string[];
}

/** What the sync did to one workflow: `fields` are the ones an update changed. */
export interface SyncOutcome {
  key: string;
  kind: 'created' | 'updated' | 'unchanged' | 'removed';
  fields: string[];
}

/**
 * The counts and the changed workflows named with their fields, in the
 * file's order, the removed last. `dependsOnChanged`: the workflows whose
 * upstreams the sync changed (written apart, in workflow_dependencies), an
 * update of `dependsOn` however the rest compares.
 */
export function summariseSync<K>(outcomes: ReadonlyMap<K, SyncOutcome>, dependsOnChanged: ReadonlySet<K>): SyncSummary {
  const counts = { created: 0, updated: 0, unchanged: 0, removed: 0 };
  const changed: string[] = [];
  for (const [id, o] of outcomes) {
    const fields = (o.kind === 'updated' || o.kind === 'unchanged') && dependsOnChanged.has(id) ? [...o.fields, 'dependsOn'] : o.fields;
    const kind = o.kind === 'unchanged' && fields.length ? 'updated' : o.kind;
    counts[kind]++;
    if (kind === 'updated') changed.push(`${o.key}: ${fields.join(', ')}`);
    if (kind === 'removed') changed.push(`${o.key}: removed`);
  }
  return { ...counts, changed: fewNames(changed) };
}
