import { type Kysely, sql } from 'kysely';

/**
 * `alerts.known_failure_run_id`: an alert opened by a cause rather than by
 * failures (running long, a missed completion deadline) counts no failure,
 * yet history may already hold one below the alert threshold (an hourly job
 * that failed once at 01:00 and runs long at 02:00). That failure is known
 * when the alert opens, and not news: the evaluator must not tell it in the
 * thread as a failure just recorded when something else (a failed manual
 * run) makes it look again. This is the newest confirmed failure history
 * held at the opening; null for alerts opened by failures (their
 * `last_run_id` already says which failure they know).
 *
 * `alerts.known_success_run_id`, likewise: the newest success history held
 * when such an alert opened (the tick before the one running long). It does
 * not resolve the alert: only a success after it does, not an evaluation
 * that finds nothing newer (a failure inside a maintenance window, a skipped
 * tick).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table alerts add column known_failure_run_id bigint, add column known_success_run_id bigint`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
