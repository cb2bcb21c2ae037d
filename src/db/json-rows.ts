/**
 * A row that came back as `to_jsonb(row)` (so that one statement can return
 * rows of several tables: the poller's claim returns each run with its
 * workflow and tenant), read as kysely would have read it: snake_case keys
 * camel-cased (top level only, as the CamelCasePlugin is configured to do),
 * timestamps as Date. Nested JSON values are left as they are.
 *
 * Timestamps are recognised by the column naming rule of the schema:
 * `…_at`, `…_until`, `…_since`, `tick` and `at` (test/db/json-rows.test.ts
 * holds every table read this way to it, against kysely's own reading).
 */
export function rowFromJson<T>(json: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const key in json) {
    const value = json[key];
    const column = columnOf(key);
    out[column.name] = column.timestamp && typeof value === 'string' ? new Date(value) : value;
  }
  return out as T;
}

/** A column's name and kind, worked out once per key: the poller reads every claimed workflow and tenant this way. */
const COLUMNS = new Map<string, { name: string; timestamp: boolean }>();

function columnOf(key: string): { name: string; timestamp: boolean } {
  let column = COLUMNS.get(key);
  if (!column) {
    column = { name: camel(key), timestamp: isTimestampColumn(key) };
    // Keys are column names, a bounded set; a cap keeps an unexpected stream of keys from growing it.
    if (COLUMNS.size < 10_000) COLUMNS.set(key, column);
  }
  return column;
}

const TIMESTAMP_COLUMN = /(_at|_until|_since)$|^(tick|at)$/;

function isTimestampColumn(key: string): boolean {
  return TIMESTAMP_COLUMN.test(key);
}

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
