import { sql } from 'kysely';
import type { Run } from '../db/schema.js';

/** The columns of a claimed run that the poller's output checks change (src/engine/poller.ts `applyOutputChecks`). */
export type CheckedRun = Pick<Run, 'id' | 'status' | 'attemptStatus' | 'attemptError' | 'error' | 'errorGroup'>;

/**
 * The update that writes the output checks' verdicts (and new error groups)
 * on the claimed rows: one statement for any number of them, fed arrays (no
 * rows: it changes nothing). Run on its own, or as a data-modifying CTE of
 * the evaluator's next statement (`lockOpenAlerts`), so a batch pays no
 * round trip for it; either way before the history facts, which read these
 * rows.
 */
export function checkedRunsUpdate(changed: CheckedRun[]) {
  const col = <T>(pick: (r: CheckedRun) => T) => changed.map(pick);
  return sql`
      update runs r set status = v.status, attempt_status = v.attempt_status, attempt_error = v.attempt_error, error = v.error, error_group = v.error_group
      from unnest(${col((r) => r.id)}::bigint[], ${col((r) => r.status)}::text[], ${col((r) => r.attemptStatus)}::text[],
                  ${col((r) => r.attemptError)}::text[], ${col((r) => r.error)}::text[], ${col((r) => r.errorGroup)}::text[])
        as v(id, status, attempt_status, attempt_error, error, error_group)
      where r.id = v.id`;
}
