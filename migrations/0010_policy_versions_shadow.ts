import { type Kysely, sql } from 'kysely';

/**
 * Policy versions (issue 17): each workflow's effective policy (cadence
 * defaults plus overrides) gets a new numbered version exactly when it
 * changes, with who or what changed it; alerts and alert events record the
 * version they were decided under. Shadow mode: a tenant or a workflow whose
 * notifications go only to the operator's audit destination.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table policy_versions (
      workflow_id integer not null references workflows(id) on delete cascade,
      version integer not null,
      policy jsonb not null,
      changed_by text not null,
      changed_at timestamptz not null,
      primary key (workflow_id, version)
    )
  `.execute(db);
  await sql`alter table workflows add column policy_version integer`.execute(db);
  await sql`alter table workflows add column shadow boolean not null default false`.execute(db);
  await sql`alter table tenants add column shadow boolean not null default false`.execute(db);
  await sql`alter table alerts add column policy_version integer`.execute(db);
  await sql`alter table alert_events add column policy_version integer`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
