import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Deps } from '../deps.js';
import type { Clock } from '../clock.js';
import { CLOCK_OFFSET_LIMIT_MS, clockBackWithin, clockOffBy, clockOffsetOf } from '../domain/clock-offset.js';
import type { UptimeSpan } from '../domain/monitor-uptime.js';
import { metrics } from '../metrics.js';

/**
 * The monitor's own downtime must not page (DESIGN.md, core idea 8). Each
 * replica keeps one monitor_uptime row: inserted on its first beat, its
 * last_seen_at bumped every UPTIME_BEAT_MS. A replica counts as alive from
 * its start until UPTIME_SLACK_MS after it was last seen; an observed tick
 * is watched when replicas were alive from the tick to the end of its grace
 * without a gap (`watchedThroughout`, src/domain/monitor-uptime.ts).
 */
export const UPTIME_BEAT_MS = 5_000;
export const UPTIME_SLACK_MS = 60_000;

export interface UptimeHeartbeat {
  beat(now: Date): Promise<void>;
}

export function createUptimeHeartbeat(deps: Pick<Deps, 'db' | 'replicaId' | 'logger'> & { clock?: Clock }): UptimeHeartbeat {
  let rowId: number | undefined;
  const shared = sharedReplicaIdCheck(deps);
  const offset = deps.clock?.wall ? clockOffsetCheck(deps as Pick<Deps, 'db' | 'logger'> & { clock: Clock }) : undefined;
  return {
    async beat(now) {
      await offset?.();
      if (rowId === undefined) {
        const row = await deps.db
          .insertInto('monitorUptime')
          .values({ replicaId: deps.replicaId, startedAt: now, lastSeenAt: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        rowId = row.id;
      } else {
        // greatest(): a beat from a slow call never moves last_seen_at backwards.
        await sql`update monitor_uptime set last_seen_at = greatest(last_seen_at, ${now}) where id = ${rowId}`.execute(deps.db);
      }
      await shared(rowId, now);
    },
  };
}

/**
 * REPLICA_ID names a replica's run leases: two live processes under one
 * name (a Kubernetes Deployment that sets it for every pod) would renew,
 * release and judge each other's leases as their own. Another row under
 * this name whose heartbeat moved on between two of this replica's beats is
 * such a process (a restarted one's old row does not move: its process is
 * gone). Told once, as an error; each side compares only the other's own
 * timestamps, so clocks that disagree do not matter.
 */
function sharedReplicaIdCheck(deps: Pick<Deps, 'db' | 'replicaId' | 'logger'>): (rowId: number, now: Date) => Promise<void> {
  let previous = new Map<number, number>();
  let told = false;
  return async (rowId, now) => {
    if (told) return;
    const rows = await deps.db
      .selectFrom('monitorUptime')
      .select(['id', 'lastSeenAt'])
      .where('lastSeenAt', '>=', new Date(now.getTime() - UPTIME_SLACK_MS))
      .where('replicaId', '=', deps.replicaId)
      .where('id', '!=', rowId)
      .execute();
    const seen = new Map(rows.map((r) => [r.id, new Date(r.lastSeenAt).getTime()]));
    if ([...seen].some(([id, at]) => (previous.get(id) ?? at) < at)) {
      told = true;
      deps.logger.error(
        { replicaId: deps.replicaId },
        `another live replica uses REPLICA_ID "${deps.replicaId}": run leases are shared between them (renewed, released and judged as each one's own); give each replica its own name, or leave REPLICA_ID unset (hostname:pid)`,
      );
    }
    previous = seen;
  };
}

/**
 * This replica's clock against the database's, at each beat (one `select`
 * every UPTIME_BEAT_MS): the gauge always, an error when it is surely more
 * than the limit off (src/domain/clock-offset.ts), told once until it is
 * surely back. Only for the machine's wall clock: a test's or the replay's
 * clock is meant to be elsewhere.
 */
function clockOffsetCheck(deps: Pick<Deps, 'db' | 'logger'> & { clock: Clock }): () => Promise<void> {
  let off = false;
  return async () => {
    const before = deps.clock.now().getTime();
    const { rows } = await sql<{ at: Date }>`select clock_timestamp() as at`.execute(deps.db);
    const measured = clockOffsetOf(before, new Date(rows[0]!.at).getTime(), deps.clock.now().getTime());
    metrics.clockOffset.set(measured.offsetMs / 1000);
    const seconds = (measured.offsetMs / 1000).toFixed(1);
    if (!off && clockOffBy(measured)) {
      off = true;
      deps.logger.error(
        { offsetSeconds: Number(seconds), uncertaintySeconds: measured.uncertaintyMs / 1000 },
        `this replica's clock is ${seconds} s ${measured.offsetMs > 0 ? 'ahead of' : 'behind'} the database's: ticks, deadlines and other replicas' leases are judged by it (run leases tolerate about 45 s, outbox sends about 12 s); synchronise it (NTP)`,
      );
    } else if (off && clockBackWithin(measured)) {
      off = false;
      deps.logger.info({ offsetSeconds: Number(seconds) }, `this replica's clock is back within ${CLOCK_OFFSET_LIMIT_MS / 1000} s of the database's`);
    }
  };
}

/**
 * The replicas' lives that may bear on [from, to] (src/domain/monitor-uptime.ts
 * decides what they cover): one row per replica process, so few.
 */
export async function uptimeSpans(db: Db, from: Date, to: Date): Promise<UptimeSpan[]> {
  return db
    .selectFrom('monitorUptime')
    .select(['startedAt', 'lastSeenAt'])
    .where('startedAt', '<=', to)
    .where('lastSeenAt', '>=', new Date(from.getTime() - UPTIME_SLACK_MS))
    .execute();
}
