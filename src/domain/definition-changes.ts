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
