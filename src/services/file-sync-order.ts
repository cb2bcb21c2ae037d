import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { WorkflowsFile } from '../config/workflows-file.js';
import type { Database } from '../db/schema.js';
import { canonicalJson } from '../domain/definition-changes.js';
import { fileSyncVerdict, type FileSync } from '../domain/file-sync-order.js';
import { UPTIME_SLACK_MS } from '../engine/uptime.js';

/** Where this replica read its workflows file. */
export interface FileOrigin {
  path: string;
  /** The file's modification time here: recorded and shown, never compared (src/domain/file-sync-order.ts). */
  modifiedAt: Date | null;
  replicaId: string;
}

/** Syncs older than this are forgotten, unless their content is the one synced last. */
const KEPT_MS = 30 * 86_400_000;

/** The digest of what the file says (parsed, defaults filled, keys sorted): the same for two copies that differ only in layout. */
export function contentHashOf(file: WorkflowsFile): string {
  return createHash('sha256').update(canonicalJson(file)).digest('hex');
}

/** Whether this copy of the file may be synced (src/domain/file-sync-order.ts), under the sync's advisory lock. */
export async function fileSyncOrder(trx: Transaction<Database>, contentHash: string, origin: FileOrigin, now: Date) {
  const latest = await trx.selectFrom('workflowsFileSyncs').selectAll().orderBy('syncedAt', 'desc').limit(1).executeTakeFirst();
  if (!latest || latest.contentHash === contentHash) return fileSyncVerdict({ contentHash, replicaId: origin.replicaId, syncedBefore: true, latest, liveSyncsOfLatest: [] });
  const syncedBefore = !!(await trx.selectFrom('workflowsFileSyncs').select('replicaId').where('contentHash', '=', contentHash).limit(1).executeTakeFirst());
  const liveSyncsOfLatest: FileSync[] = await trx
    .selectFrom('workflowsFileSyncs as s')
    .selectAll('s')
    .where('s.contentHash', '=', latest.contentHash)
    .where('s.replicaId', '<>', origin.replicaId)
    .where('s.replicaStoppedAt', 'is', null)
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('monitorUptime as u').select(sql`1`.as('one')).whereRef('u.replicaId', '=', 's.replicaId').where('u.lastSeenAt', '>', new Date(now.getTime() - UPTIME_SLACK_MS))),
    )
    .orderBy('s.syncedAt', 'desc')
    .execute();
  return fileSyncVerdict({ contentHash, replicaId: origin.replicaId, syncedBefore, latest, liveSyncsOfLatest });
}

/** Records this replica's sync of this content, and forgets old syncs of other contents. */
export async function recordFileSync(trx: Transaction<Database>, contentHash: string, origin: FileOrigin, now: Date): Promise<void> {
  const row = { contentHash, replicaId: origin.replicaId, filePath: origin.path, fileModifiedAt: origin.modifiedAt, syncedAt: now };
  await trx
    .insertInto('workflowsFileSyncs')
    .values(row)
    .onConflict((oc) => oc.columns(['contentHash', 'replicaId']).doUpdateSet({ filePath: origin.path, fileModifiedAt: origin.modifiedAt, syncedAt: now, replicaStoppedAt: null }))
    .execute();
  await trx.deleteFrom('workflowsFileSyncs').where('syncedAt', '<', new Date(now.getTime() - KEPT_MS)).where('contentHash', '<>', contentHash).execute();
}

/**
 * A replica whose stop completed no longer holds the newer file: without
 * this, its heartbeat's last minute kept refusing the older copy to the last
 * replica of a full rollback, and nothing would sync it until the next start.
 */
export async function markFileSyncsStopped(db: Kysely<Database>, replicaId: string, now: Date): Promise<void> {
  await db.updateTable('workflowsFileSyncs').set({ replicaStoppedAt: now }).where('replicaId', '=', replicaId).where('replicaStoppedAt', 'is', null).execute();
}
