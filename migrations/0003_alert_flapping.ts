import { type Kysely, sql } from 'kysely';

/**
 * When an open alert was first seen flapping (src/domain/flapping.ts). Set
 * once, in the same transaction that records the alert's `flapping` event,
 * so the thread is told once per alert however long the flapping lasts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table alerts add column flapping_since timestamptz`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
