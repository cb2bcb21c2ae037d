import { type Kysely, sql } from 'kysely';

/**
 * The signatures of the Slack requests taken in the last few minutes, shared
 * by every replica: a signed request is good for five minutes by its
 * timestamp, so one captured and sent again within them must find its
 * signature here and be refused (src/slack/listeners/request-guard.ts).
 * Rows older than the window are deleted by the next request's insert.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table slack_requests_seen (
      signature text primary key,
      slack_ts bigint not null
    )
  `.execute(db);
  await sql`create index slack_requests_seen_by_ts on slack_requests_seen (slack_ts)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
