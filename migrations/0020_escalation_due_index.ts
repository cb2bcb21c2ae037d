import { type Kysely, sql } from 'kysely';

/**
 * The escalation clock locks only the warnings that are due (it used to lock
 * every open unacknowledged warning each minute). When a warning is due is
 * src/domain/escalation.ts's rule, spelt in SQL once, here, as an index
 * expression the clock's claim repeats word for word (ESCALATION_DUE_AT in
 * src/engine/escalation.ts):
 * - kept failing (consecutive failures reached the snapshotted
 *   escalateAfterFailures): due since it opened;
 * - otherwise at escalate_at (null: never).
 * `escalation_threshold` reads the snapshot without ever failing: a value
 * that is not a number (an old snapshot without one) means never, as
 * `Number(policy.escalateAfterFailures ?? Infinity)` does.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function escalation_threshold(policy jsonb) returns numeric
    language sql immutable parallel safe
    as $$
      select case
        when jsonb_typeof(policy -> 'escalateAfterFailures') = 'number' then (policy ->> 'escalateAfterFailures')::numeric
        when jsonb_typeof(policy -> 'escalateAfterFailures') = 'string' and (policy ->> 'escalateAfterFailures') ~ '^\\s*[0-9]+(\\.[0-9]+)?\\s*$'
          then trim(policy ->> 'escalateAfterFailures')::numeric
      end
    $$;
    create index alerts_escalation_due on alerts ((case when consecutive_failures >= escalation_threshold(policy) then opened_at else escalate_at end))
      where status = 'open' and severity = 'warning' and acknowledged_at is null;
  `.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
