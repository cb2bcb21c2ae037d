import { type Kysely, sql } from 'kysely';

/**
 * Pause by hand and maintenance windows (issue 13).
 *
 * - workflows.paused_by/paused_at/pause_reason: a pause set from Slack or the
 *   API (the file's `paused` stays the operator's switch; a sync does not undo
 *   a pause set by hand). paused_at lets resume move an open warning's
 *   escalation deadline by the time it stood still.
 * - workflows.maintenance / tenants.maintenance: recurring windows from the
 *   workflows file ({ cron, timezone, durationMs, reason }).
 * - runs.in_maintenance: the tick fell inside a window; recorded, never held
 *   against the workflow (history facts skip its failure).
 * - maintenance_windows: one-off windows, and each occurrence of a recurring
 *   one (recurrence = which rule; unique, so replicas record it once).
 *   told_at is the claim of the one `maintenance_ended` note; channel_note
 *   holds it for the tenant channel when no alert thread was there to tell.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table workflows
      add column paused_at timestamptz,
      add column paused_by text,
      add column pause_reason text,
      add column maintenance jsonb not null default '[]';
    alter table tenants add column maintenance jsonb not null default '[]';
    alter table runs add column in_maintenance boolean not null default false;

    create table maintenance_windows (
      id bigserial primary key,
      tenant_id text not null references tenants (id),
      -- null: every workflow of the tenant
      workflow_id integer references workflows (id),
      starts_at timestamptz not null,
      ends_at timestamptz not null check (ends_at > starts_at),
      reason text,
      created_by text,
      recurrence text,
      told_at timestamptz,
      -- a tenant-wide window that ended with no open alert to tell: the tenant channel's note, and when it was claimed
      channel_note jsonb,
      channel_noted_at timestamptz,
      created_at timestamptz not null
    );
    create index maintenance_windows_channel_notes on maintenance_windows (id) where channel_note is not null and channel_noted_at is null;
    create unique index maintenance_windows_occurrence on maintenance_windows (tenant_id, coalesce(workflow_id, 0), recurrence, starts_at) where recurrence is not null;
    create index maintenance_windows_untold on maintenance_windows (ends_at) where told_at is null;
    create index maintenance_windows_by_tenant on maintenance_windows (tenant_id, ends_at);
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
