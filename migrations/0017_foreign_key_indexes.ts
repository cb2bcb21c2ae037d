import { type Kysely, sql } from 'kysely';

/**
 * Every row retention deletes is checked against the foreign keys that point
 * at it; without an index on the referencing column each check is a scan of
 * the referencing table, once per deleted row. Found by the ten-million-run
 * ledger benchmark (`--full`): deleting a batch of alert events scanned
 * `notifications` (400,000 rows) per event and ran past the statement
 * timeout. `alerts.upstream_alert_id` (an alert's own table) is the other
 * one retention reaches. test/ledger/foreign-key-indexes.test.ts keeps it so.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index notifications_by_event on notifications (event_id);
    create index alerts_by_upstream_alert on alerts (upstream_alert_id) where upstream_alert_id is not null;
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
