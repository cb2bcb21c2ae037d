import { type Kysely, sql } from 'kysely';

/**
 * Retention keeps a workflow's newest success while an alert of the workflow
 * still pins an older failure (src/ledger/retention.ts): it asks, for such a
 * success, which alerts the workflow has, open or resolved. Without this
 * index that was a scan of every alert for each one, every pass.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index alerts_by_workflow on alerts (workflow_id)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
