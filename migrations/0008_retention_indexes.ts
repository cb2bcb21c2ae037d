import { type Kysely, sql } from 'kysely';

/**
 * What the retention pass needs to stay bounded as history grows:
 * - alerts' run references indexed, so deleting a run (its foreign-key check)
 *   and asking "does an alert still point at it" are index lookups, not scans;
 * - resolved alerts by resolution time, for the alert cut-off;
 * - a BRIN index on runs.created_at (a few pages for billions of rows, since
 *   rows arrive in time order), for the run cut-off;
 * - housekeeping firings, one row per (job, scheduled instant): the claim that
 *   lets exactly one replica run a firing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index alerts_first_run on alerts (first_run_id) where first_run_id is not null;
    create index alerts_last_run on alerts (last_run_id) where last_run_id is not null;
    create index alerts_resolved_by_run on alerts (resolved_by_run_id) where resolved_by_run_id is not null;
    create index alerts_resolved_at on alerts (resolved_at) where status = 'resolved';
    create index runs_created_brin on runs using brin (created_at);
    create table housekeeping_firings (
      job text not null,
      fire_at timestamptz not null,
      replica text not null,
      started_at timestamptz not null,
      finished_at timestamptz,
      result jsonb,
      error text,
      primary key (job, fire_at)
    );
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
