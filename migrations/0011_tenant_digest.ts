import { type Kysely, sql } from 'kysely';

/**
 * The tenant's digest (issue 15): when the daily or weekly summary is posted,
 * `{ cron, timezone }` from the workflows file or PUT /api/v1/tenants; null:
 * no digest on a schedule (`/scheduler digest` still shows one on demand).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants add column digest jsonb`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
