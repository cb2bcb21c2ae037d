import { type Kysely, sql } from 'kysely';

/**
 * The people around an alert (issue 12 "Slack rights", issue 13 "human loop").
 * tenants.rights: who may respond / administer the tenant's alerts in Slack.
 * tenants.oncall: the Slack user group and/or users an unowned escalation pages.
 * tenants.ownership_expires_after_seconds: an ownership older than this lapses.
 * alerts.reminded_at: when the last reminder was told; the reminder claim is a
 * conditional update on it, so two replicas remind once per period.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants add column rights jsonb not null default '{}'::jsonb`.execute(db);
  await sql`alter table tenants add column oncall jsonb not null default '{}'::jsonb`.execute(db);
  await sql`alter table tenants add column ownership_expires_after_seconds integer`.execute(db);
  await sql`alter table alerts add column reminded_at timestamptz`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
