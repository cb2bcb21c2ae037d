import { isConnectionError } from '../db/connection-errors.js';
import type { Deps } from '../deps.js';

/**
 * Launches decided in a transaction whose COMMIT got no answer: the
 * connection dropped as it was sent (a termination, a reset, a server
 * restart), so the rows may or may not have committed. Without a look, a
 * committed row waited, unlaunched, for its lease to run out and was failed
 * as "worker lost", which cost its tick an attempt (for a workflow without
 * retries, a failed tick). Each replica keeps them and looks them up at its
 * next pass: the ones in the ledger, still `running` and still its own, are
 * launched then (launchRun takes the lease again first). A row rolled back
 * is not found: sequence values are never handed out twice, so an id that
 * exists is this transaction's row. Only this replica launches a row leased
 * to it, so nothing else can have launched them meanwhile.
 */
export class UnconfirmedLaunches<T extends { run: { id: number } }> {
  private readonly byReplica = new Map<string, T[]>();

  /**
   * Runs `transaction` (which hands back its launches through `decided`
   * before it returns); on a connection error after it returned, that is at
   * COMMIT, its launches are kept for `confirmed`. The error is thrown on.
   */
  async commit<R>(replicaId: string, transaction: (decided: (launches: T[]) => void) => Promise<R>): Promise<R> {
    let launches: T[] | undefined;
    try {
      return await transaction((l) => (launches = l));
    } catch (error) {
      if (launches?.length && isConnectionError(error)) this.byReplica.set(replicaId, [...(this.byReplica.get(replicaId) ?? []), ...launches]);
      throw error;
    }
  }

  /** The kept launches whose rows committed and are still this replica's to launch; the rest are forgotten. */
  async confirmed(deps: Pick<Deps, 'db' | 'replicaId'>): Promise<T[]> {
    const kept = this.byReplica.get(deps.replicaId);
    if (!kept?.length) return [];
    const rows = await deps.db
      .selectFrom('runs')
      .select('id')
      .where(
        'id',
        'in',
        kept.map((l) => l.run.id),
      )
      .where('status', '=', 'running')
      .where('leaseOwner', '=', deps.replicaId)
      .execute();
    // Kept ones added while the look ran (another claimer's) wait for the next look.
    const rest = (this.byReplica.get(deps.replicaId) ?? []).filter((l) => !kept.includes(l));
    if (rest.length > 0) this.byReplica.set(deps.replicaId, rest);
    else this.byReplica.delete(deps.replicaId);
    const found = new Set(rows.map((r) => r.id));
    return kept.filter((l) => found.has(l.run.id));
  }
}
