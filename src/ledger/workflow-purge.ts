import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

const FOREIGN_KEY_VIOLATION = '23503';

/** Removed count, and the highest id the batch deleted (`after` when none): the next batch starts after it. */
export interface PurgeBatch {
  n: number;
  last: number;
}

/**
 * Deletes up to `batch` workflows removed (`removed_at`, disabled) before `before` that
 * nothing kept points at (src/domain/retention.ts, removedWorkflowCutoff):
 * no alert and no run left, not an upstream in an enabled workflow's
 * `dependsOn`, with an id above `after`. Walked in id order with that cursor,
 * as runs and notifications are (src/ledger/retention.ts): a removed
 * workflow still kept (runs or alerts left) is read once per pass, not once
 * per batch. Their policy versions, dependency links and upstream blocks go
 * by `on delete cascade`, their maintenance windows here.
 *
 * Concurrency: the rows are locked `for update skip locked`, re-checking
 * `not enabled` on the newest version (`removed_at` too: a PUT clears it). A PUT (or a workflows file sync) that
 * locked the row first makes this pass skip it, and it is enabled when the
 * next one looks; one that comes after waits on the lock and then finds no
 * row, so it creates the workflow anew. A run or alert written for the
 * workflow between this statement's snapshot and its delete (none should be:
 * only enabled workflows fire, take reports or pings) fails the foreign key
 * check: the batch is rolled back, reported as nothing removed, and the next
 * pass looks again.
 */
export async function deleteRemovedWorkflows(db: Db, before: Date, batch: number, after = 0): Promise<PurgeBatch> {
  try {
    const { rows } = await sql<PurgeBatch>`
      with victims as (
        select w.id from workflows w
        where w.id > ${after} and not w.enabled and w.removed_at < ${before}
          and not exists (select 1 from runs r where r.workflow_id = w.id)
          and not exists (select 1 from alerts a where a.workflow_id = w.id)
          and not exists (
            select 1 from workflow_dependencies d join workflows down on down.id = d.workflow_id
            where d.upstream_id = w.id and down.enabled
          )
        order by w.id
        limit ${batch}
        for update of w skip locked
      ),
      gone_windows as (delete from maintenance_windows m using victims v where m.workflow_id = v.id returning 1),
      gone as (delete from workflows w using victims v where w.id = v.id returning 1)
      select (select count(*) from gone)::int as n, coalesce((select max(id) from victims), ${after})::float8 as last
    `.execute(db);
    return rows[0] ?? { n: 0, last: after };
  } catch (err) {
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return { n: 0, last: after };
    throw err;
  }
}
