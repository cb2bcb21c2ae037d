import { type Kysely, sql } from 'kysely';

/**
 * Why a destination is held (`destination_outages.cause`): `unreachable`
 * (5xx, timeouts, resets: every outage before this migration) or
 * `credentials` (the receiver refused the bot's credentials: a revoked Slack
 * token, a webhook's 401). A credential outage may be kept under a scope
 * wider than one destination: `slack:*` holds every Slack channel, since
 * they share the bot token (src/domain/destination-outage.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table destination_outages
      add column cause text not null default 'unreachable'
      constraint destination_outages_cause check (cause in ('unreachable', 'credentials'))
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
