import { type Kysely, sql } from 'kysely';

/**
 * What the operator grants a tenant beyond its own rows (docs/security.md):
 * the environment-variable prefix its http launchers' `secretEnv` may name
 * (null: none), and the hosts its http launchers may target besides
 * HTTP_LAUNCHER_ALLOWED_HOSTS. Both come from the workflows file only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants add column secret_env_prefix text`.execute(db);
  await sql`alter table tenants add column launcher_hosts jsonb not null default '[]'::jsonb`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
