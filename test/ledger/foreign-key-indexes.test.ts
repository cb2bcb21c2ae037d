import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Deleting a row makes PostgreSQL check every foreign key that points at it
 * with `select 1 from <referencing table> where <column> = $1`. Without an
 * index it can use (whole, or partial on `<column> is not null`), that check
 * scans the referencing table once per deleted row, and retention's bounded
 * batches stop being bounded as the ledger grows (found at ten million runs:
 * migration 0017). Every foreign key into a table retention deletes from must
 * have one.
 */
const DELETED_BY_RETENTION = ['runs', 'alerts', 'alert_events', 'notifications', 'alert_threads', 'storm_alerts', 'upstream_blocks', 'workflows'];

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe('foreign keys into the tables retention deletes from', () => {
  it('each has an index on its referencing column that the delete check can use', async () => {
    const { rows } = await sql<{ referencing: string; column: string; referenced: string; usable: boolean }>`
      select c.conrelid::regclass::text as referencing, a.attname as column, c.confrelid::regclass::text as referenced,
        exists (
          select 1 from pg_index i
          where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1]
            and (i.indpred is null or pg_get_expr(i.indpred, i.indrelid) = '(' || quote_ident(a.attname) || ' IS NOT NULL)')
        ) as usable
      from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.contype = 'f' and cardinality(c.conkey) = 1
    `.execute(t.db);
    const checked = rows.filter((r) => DELETED_BY_RETENTION.includes(r.referenced));
    expect(checked.map((r) => `${r.referencing}.${r.column}`)).toEqual(expect.arrayContaining(['notifications.event_id', 'alerts.upstream_alert_id', 'runs.original_run_id', 'alerts.first_run_id', 'runs.workflow_id', 'maintenance_windows.workflow_id']));
    expect(checked.filter((r) => !r.usable).map((r) => `${r.referencing}.${r.column} -> ${r.referenced}`)).toEqual([]);
  });
});
