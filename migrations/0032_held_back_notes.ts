import { type Kysely, sql } from 'kysely';

/**
 * A downstream held back by another tenant's upstream incident is told so in
 * its own tenant's channel, once per block (upstream alert × downstream
 * workflow), and told again when that incident ends
 * (src/slack/transport/held-back-notes.ts): when each note was taken to be
 * posted. A block older than this migration whose upstream incident is
 * still open is told at once; one whose held note was never posted (its
 * incident ended first) gets no released note either.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table upstream_blocks add column held_noted_at timestamptz, add column released_noted_at timestamptz`.execute(db);
  // The notes loop finds held notes from the open alerts (the primary key), released ones here: the few told
  // held and not yet released.
  await sql`create index upstream_blocks_release_due on upstream_blocks (upstream_alert_id) where held_noted_at is not null and released_noted_at is null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
