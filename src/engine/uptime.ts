import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Deps } from '../deps.js';

/**
 * The monitor's own downtime must not page (DESIGN.md, core idea 8). Each
 * replica keeps one monitor_uptime row: inserted on its first beat, its
 * last_seen_at bumped every UPTIME_BEAT_MS. A tick is covered when some
 * replica had started by then and was seen within UPTIME_SLACK_MS before it.
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

export async function monitorWasUp(db: Db, at: Date): Promise<boolean> {
  const slackStart = new Date(at.getTime() - UPTIME_SLACK_MS);
  const row = await db
    .selectFrom('monitorUptime')
    .select('id')
    .where('startedAt', '<=', at)
    .where('lastSeenAt', '>=', slackStart)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
