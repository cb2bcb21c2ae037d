import { type Kysely, sql } from 'kysely';

/**
 * What /metrics needs to stay bounded as history grows (issue 15): the runs
 * in flight and the dead notifications are counted through partial indexes
 * holding only those rows, so a scrape reads what is in flight or dead, never
 * the history (the settled runs are estimated from PostgreSQL's statistics:
 * src/services/run-counts.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index runs_pending_retry on runs (id) where status = 'pending_retry';
    create index notifications_dead on notifications (destination) where status = 'dead';
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
