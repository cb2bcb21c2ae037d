import { type Kysely, sql } from 'kysely';

/**
 * Pacing shared by every replica: one row per pacing key (a Slack channel's
 * destination, a webhook host, an email or PagerDuty destination) saying
 * when the next delivery under that key may start. Written only with the
 * senders' injected clock; `updated_at` is that clock's reading at the write,
 * so a row left by a clock that has since gone back can be recognised.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table pace_slots (
      key text primary key,
      next_at timestamptz not null,
      updated_at timestamptz not null
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
