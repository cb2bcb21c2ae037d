import { type Kysely, sql } from 'kysely';

/**
 * Retention removes a workflow removed (`removed_at`) longer than
 * ALERT_RETENTION_DAYS once nothing kept points at it (src/ledger/retention.ts).
 * Deleting a workflow makes PostgreSQL check `runs.workflow_id` and
 * `maintenance_windows.workflow_id` for rows still pointing at it; every index
 * on `runs` that starts with `workflow_id` is partial (originals only,
 * successes with a duration, ...), so without these that check, and the
 * pass's own "no runs left" test, would be a scan of `runs` per workflow.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Removed (gone from the file, DELETE over the API), as against declared with `enabled: false`: only a
  // removed one is ever deleted. Rows disabled before this migration are not known to be either, so none is.
  await sql`alter table workflows add column removed_at timestamptz`.execute(db);
  await sql`create index runs_by_workflow on runs (workflow_id)`.execute(db);
  await sql`create index maintenance_windows_by_workflow on maintenance_windows (workflow_id) where workflow_id is not null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
