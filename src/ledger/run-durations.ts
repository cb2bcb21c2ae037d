import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { NORMAL_SAMPLES, normalDuration, type NormalDuration } from '../domain/run-duration.js';

/**
 * The normal duration of each workflow (issue 16) from its newest successful
 * attempts: one bounded read per workflow, served by the partial index
 * `runs_successful_durations` (workflow_id, finished_at desc) alone. The rule
 * that turns the samples into a normal is src/domain/run-duration.ts.
 */
export async function loadNormalDurations(db: Kysely<Database> | Transaction<Database>, workflowIds: number[]): Promise<Map<number, NormalDuration | null>> {
  if (workflowIds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; samples: number[] }>`
    select w.id::int as id, array(
      select r.duration_seconds from runs r
      where r.workflow_id = w.id and r.attempt_status = 'succeeded' and r.duration_seconds is not null
      order by r.finished_at desc limit ${NORMAL_SAMPLES}
    ) as samples
    from unnest(${[...new Set(workflowIds)]}::bigint[]) as w(id)
  `.execute(db);
  return new Map(rows.map((r) => [Number(r.id), normalDuration(r.samples.map(Number))]));
}
