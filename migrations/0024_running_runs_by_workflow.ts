import { type Kysely, sql } from 'kysely';

/**
 * The tick scheduler asks, for every batch of due workflows, which of them
 * still have a run running (the overlap policy, src/domain/overlap.ts). The
 * index holds only running rows, so the question costs what is in flight,
 * never a walk through each workflow's history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_running_by_workflow on runs (workflow_id) where status = 'running'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
