import { type Kysely, sql } from 'kysely';

/**
 * The storm decision counts a channel's alert openings in the last few
 * minutes (`src/ledger/storm-claims.ts`): by destination and creation time.
 * Without an index on those columns each evaluation batch that opened an
 * alert read the whole `notifications` table once per channel; on the
 * ten-million-run ledger of `bench -- --full` (400,000 notifications) that was
 * 90 ms a channel and evaluation ran at a third of its empty-ledger speed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index notifications_by_destination on notifications (destination, created_at)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
