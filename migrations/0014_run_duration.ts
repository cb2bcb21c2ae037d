import { type Kysely, sql } from 'kysely';

/**
 * Run duration (issue 16):
 * - `runs.duration_seconds`: how long the attempt ran, written when it ends
 *   (finished_at − started_at, or the duration a finish-only report carries);
 *   null when nobody knows (a missed tick, a report with only its end).
 * - `runs.long_noticed_at`: when the "running long" verdict was told for this
 *   run; the conditional update that sets it is the claim, so two replicas
 *   tell it once.
 * - `workflows.completion_checked_tick`: the newest tick whose completion
 *   deadline (`completeBy`) has been judged; the cursor and the claim of the
 *   deadline check, as next_tick_at is for missed ticks.
 * - `alerts.cause`: what opened an alert that no failure opened
 *   ('running_long', 'completion_missed'), so its root says so; null: failures.
 * The index serves the normal-duration query: the newest ≤ 50 successful
 * attempts of one workflow, read from the index alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column duration_seconds double precision, add column long_noticed_at timestamptz`.execute(db);
  await sql`alter table workflows add column completion_checked_tick timestamptz`.execute(db);
  // What opened an alert that no failure opened: 'running_long' or 'completion_missed'; null: failures.
  await sql`alter table alerts add column cause text`.execute(db);
  // Finish-only reports were stored with started_at = finished_at: their duration is unknown, not zero.
  await sql`
    update runs set duration_seconds = extract(epoch from finished_at - started_at)
    where started_at is not null and finished_at > started_at
  `.execute(db);
  await sql`
    create index runs_successful_durations on runs (workflow_id, finished_at desc) include (duration_seconds)
    where attempt_status = 'succeeded' and duration_seconds is not null
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
