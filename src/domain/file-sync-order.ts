/** A workflows file content as one replica synced it. */
export interface FileSync {
  contentHash: string;
  replicaId: string;
  filePath: string;
  fileModifiedAt: Date | null;
  syncedAt: Date;
}

/**
 * Whether a replica may sync its copy of the workflows file, given the syncs
 * recorded before. Refused only when its copy is known to be older: the same
 * content was synced before, and a different one has been synced since by a
 * replica that is still running (`newer`: its last sync). That is the replica
 * of a rolling deploy restarted on the old file after a new one synced:
 * syncing would put the old definitions back under the running new replicas.
 *
 * Everything else syncs, the last start having the last word as before: a
 * content never synced (an edit), the same content again, and an older one
 * once no replica that synced the newer one runs any more (a rollback of
 * every replica: the first to restart once the others are gone syncs it).
 * File modification times are recorded and shown, never compared: they
 * differ across hosts and image builds, and an old copy written at a pod's
 * start looks new.
 */
export function fileSyncVerdict(input: {
  contentHash: string;
  replicaId: string;
  /** Whether this content was synced before, by any replica. */
  syncedBefore: boolean;
  /** The last sync recorded, whatever its content. */
  latest: FileSync | undefined;
  /** The syncs of the latest content by replicas whose heartbeat the database saw lately, this one apart; newest first. */
  liveSyncsOfLatest: FileSync[];
}): { kind: 'sync' } | { kind: 'older'; newer: FileSync } {
  const { latest } = input;
  if (!latest || !input.syncedBefore || latest.contentHash === input.contentHash) return { kind: 'sync' };
  const newer = input.liveSyncsOfLatest.find((s) => s.replicaId !== input.replicaId && s.contentHash === latest.contentHash);
  return newer ? { kind: 'older', newer } : { kind: 'sync' };
}
