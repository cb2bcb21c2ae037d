import { type Kysely, sql } from 'kysely';

/**
 * The PagerDuty keys (destination ids, digests: never a key) configured for
 * an alert's tenant when the alert opened, or went live: a key added while
 * it is open, beside a retired key that holds its incident, is that key's
 * replacement and opens no second incident for it
 * (src/domain/pagerduty-incident.ts `opensIncident`). Null for alerts opened
 * before this column: routed as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table alerts add column pagers_at_opening text[]`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
