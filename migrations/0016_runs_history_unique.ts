import { type Kysely, sql } from 'kysely';

/**
 * One index instead of two over the same columns (issue 15, tick lateness on
 * a large ledger). `runs_one_original_per_tick` (unique, workflow and tick of
 * each original row with a tick) and `runs_history` (workflow and tick, newest
 * first, of each original row) covered the same rows but for the few without
 * a tick, so every run inserted wrote two nearly identical B-trees: once the
 * ledger outgrows `shared_buffers` that is a second random page to read and
 * dirty per insert. A unique index on `runs_history`'s columns enforces the
 * same rule, since PostgreSQL treats NULL ticks as distinct, and the insert's
 * `on conflict (workflow_id, tick) where original_run_id is null and tick is
 * not null` still infers it (its predicate implies the index's).
 *
 * Built before the old two are dropped, so a tick is never unguarded; on a
 * very large ledger this migration reads `runs` once (see docs/retention.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unique index runs_history_unique on runs (workflow_id, tick desc) where original_run_id is null;
    drop index runs_one_original_per_tick;
    drop index runs_history;
    alter index runs_history_unique rename to runs_history;
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
