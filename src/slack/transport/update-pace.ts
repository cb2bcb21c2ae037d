import type { Db } from '../../db/connect.js';
import { Pacer } from '../../notify/pacer.js';

/**
 * The workspace's chat.update pace in `pace_slots`, shared by every replica:
 * Tier 3 is per workspace, so each replica keeping 1.2 s on its own would
 * together send one update per 1.2 s per replica.
 */
export const ROOT_UPDATE_PACE_KEY = 'slack-workspace:chat.update';

/**
 * One replica's view of that pace: `ready` answers from what this replica
 * has learnt (no query while it knows the slot is taken), `take` asks the
 * database for the slot, `hold` keeps every replica off it (a 429).
 * An interval of 0 (the console sink) is no pace at all.
 */
export function workspaceUpdatePace(db: Db, minIntervalMs: number) {
  const pacer = new Pacer(db);
  let notBefore = 0;
  return {
    ready: (now: Date) => now.getTime() >= notBefore,
    async take(now: Date): Promise<boolean> {
      if (minIntervalMs === 0) return true;
      const slot = await pacer.take(ROOT_UPDATE_PACE_KEY, ROOT_UPDATE_PACE_KEY, now, minIntervalMs);
      notBefore = slot.ok ? now.getTime() + minIntervalMs : slot.readyAt.getTime();
      return slot.ok;
    },
    async hold(retryAfterMs: number, now: Date): Promise<void> {
      notBefore = now.getTime() + retryAfterMs;
      if (minIntervalMs > 0) await pacer.hold(ROOT_UPDATE_PACE_KEY, ROOT_UPDATE_PACE_KEY, new Date(notBefore), now);
    },
  };
}

/** How long the workspace's re-renders (roots, storm messages) wait after Slack refused the bot token: tried again a minute on, never in a loop. */
export const CREDENTIALS_PAUSE_MS = 60_000;
