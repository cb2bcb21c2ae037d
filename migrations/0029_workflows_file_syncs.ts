import { type Kysely, sql } from 'kysely';

/**
 * One row per workflows file content (its sha256, over the parsed file) and
 * replica that synced it: where it was read, its modification time there,
 * when that replica last synced it, and when that replica stopped (a stop
 * that completed; one killed is known gone by its heartbeat). A replica
 * restarted with an older copy of the file (one synced before, and replaced
 * since by another replica still running) is refused rather than put the
 * older definitions back (src/domain/file-sync-order.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table workflows_file_syncs (
      content_hash text not null,
      replica_id text not null,
      file_path text not null,
      file_modified_at timestamptz,
      synced_at timestamptz not null,
      replica_stopped_at timestamptz,
      primary key (content_hash, replica_id)
    )
  `.execute(db);
  await sql`create index workflows_file_syncs_synced_at on workflows_file_syncs (synced_at)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
