import { type Kysely, sql } from 'kysely';

/**
 * Workflow dependencies (issue 16):
 * - `workflow_dependencies`: a workflow's `dependsOn`, resolved to ids (the
 *   file sync and the workflows API write it whole for the workflow);
 * - `upstream_blocks`: a downstream workflow's failures and missed ticks
 *   recorded against an open upstream alert instead of an alert of its own,
 *   one row per (upstream alert, downstream workflow). Whether a block is
 *   still in force is not stored: it is while its upstream alert is open, and
 *   the downstream's history counts again from that alert's resolved_at;
 * - `alerts.upstream_alert_id`: a downstream alert linked to the upstream
 *   incident it outlived or that broke while it was open.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table workflow_dependencies (
      workflow_id integer not null references workflows(id) on delete cascade,
      upstream_id integer not null references workflows(id) on delete cascade,
      primary key (workflow_id, upstream_id),
      check (workflow_id <> upstream_id)
    )
  `.execute(db);
  await sql`create index workflow_dependencies_upstream on workflow_dependencies (upstream_id)`.execute(db);
  await sql`
    create table upstream_blocks (
      upstream_alert_id bigint not null references alerts(id) on delete cascade,
      workflow_id integer not null references workflows(id) on delete cascade,
      since timestamptz not null,
      last_at timestamptz not null,
      failures integer not null default 0,
      missed integer not null default 0,
      last_run_id bigint,
      primary key (upstream_alert_id, workflow_id)
    )
  `.execute(db);
  await sql`create index upstream_blocks_workflow on upstream_blocks (workflow_id, since desc)`.execute(db);
  await sql`alter table alerts add column upstream_alert_id bigint references alerts(id) on delete set null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
