import { type Kysely, sql } from 'kysely';

/**
 * A destination refusing notifications for good (a Slack channel the bot is
 * not in or that was archived, a webhook URL answering 404): one row per
 * destination while it keeps refusing, so the platform channel is told once
 * (and again a day later if it still refuses) however many replicas see its
 * rows go dead. A delivery to it deletes the row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table destination_refusals (
      destination text primary key,
      first_refused_at timestamptz not null,
      refusals integer not null,
      last_error text not null,
      noticed_at timestamptz not null
    )
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
