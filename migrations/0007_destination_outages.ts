import { type Kysely, sql } from 'kysely';

/**
 * One row per destination that is failing right now for a transient reason
 * (deleted when it accepts a delivery). The claim skips a destination while
 * `held_until` is ahead, so its rows wait behind one back-off and leave in
 * order on recovery; `noticed_at` says the platform was told once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table destination_outages (
      destination text primary key,
      failing_since timestamptz not null,
      failures int not null,
      held_until timestamptz not null,
      last_error text not null,
      noticed_at timestamptz
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
