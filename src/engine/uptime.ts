import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Deps } from '../deps.js';
import type { UptimeSpan } from '../domain/monitor-uptime.js';

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

export function createUptimeHeartbeat(deps: Pick<Deps, 'db' | 'replicaId'>): UptimeHeartbeat {
  let rowId: number | undefined;
  return {
    async beat(now) {
      if (rowId === undefined) {
        const row = await deps.db
          .insertInto('monitorUptime')
          .values({ replicaId: deps.replicaId, startedAt: now, lastSeenAt: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        rowId = row.id;
        return;
      }
      // greatest(): a beat from a slow call never moves last_seen_at backwards.
      await sql`update monitor_uptime set last_seen_at = greatest(last_seen_at, ${now}) where id = ${rowId}`.execute(deps.db);
    },
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
