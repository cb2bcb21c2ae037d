import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * What a stopping replica leaves behind, for the one line that says it has
 * stopped: the runs it was supervising when told to stop, and the outbox it
 * leaves to the other replicas (or to its own next start).
 */
export interface StopSummary {
  /** Runs this replica supervised when told to stop (a live command, an HTTP launch waiting for its answer). */
  runsInFlight: number;
  /** Of them: ended on their own within the grace. */
  runsEnded: number;
  /** Of them: ended by the stop, recorded failed as interrupted. */
  runsInterrupted: number;
  /** Of them: still `running` (their end could not be recorded): their lease runs out and another replica fails them as worker lost. */
  runsLeftRunning: number;
  /** Notifications still to deliver, for whichever replica claims next. */
  notificationsPending: number;
  /** Of them: still leased to this replica (claimed, not handed back): due again when the lease runs out. */
  notificationsLeased: number;
}

/** Counted in one statement, after the loops and launchers stopped and before the pools close. */
export async function summariseStop(db: Db, replicaId: string, runIds: number[], now: Date): Promise<StopSummary> {
  const ids = runIds.length ? runIds : [0];
  const { rows } = await sql<Omit<StopSummary, 'runsInFlight'>>`
    select
      (select count(*) from runs where id in (${sql.join(ids)}) and status <> 'running' and coalesce(error, '') not like 'interrupted:%')::int as "runsEnded",
      (select count(*) from runs where id in (${sql.join(ids)}) and error like 'interrupted:%')::int as "runsInterrupted",
      (select count(*) from runs where id in (${sql.join(ids)}) and status = 'running')::int as "runsLeftRunning",
      (select count(*) from notifications where status in ('pending', 'held', 'sending'))::int as "notificationsPending",
      (select count(*) from notifications where status in ('pending', 'held', 'sending') and lease_owner = ${replicaId} and lease_expires_at > ${now})::int as "notificationsLeased"
  `.execute(db);
  return { runsInFlight: runIds.length, ...rows[0]! };
}

/** The stop's counts in words, for the log line. */
export function describeStop(s: StopSummary): string {
  const runs = s.runsInFlight === 0
    ? 'no run in flight'
    : `${s.runsInFlight} run${s.runsInFlight === 1 ? '' : 's'} in flight: ${s.runsEnded} ended, ${s.runsInterrupted} interrupted, ${s.runsLeftRunning} left running for another replica to fail once the lease runs out`;
  const outbox = `${s.notificationsPending} notification${s.notificationsPending === 1 ? '' : 's'} pending for the other replicas${s.notificationsLeased ? ` (${s.notificationsLeased} still leased to this one, due again when the lease runs out)` : ''}`;
  return `${runs}; ${outbox}`;
}
