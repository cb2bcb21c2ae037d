import type { Workflow } from '../db/schema.js';
import { fireTimesBetween, latestFireAtOrBefore, nextFireAfter } from '../domain/schedule.js';
import { profileOf } from '../ledger/profiles.js';
import type { OverlapPolicy } from '../domain/overlap.js';

/** After a long outage only this many older ticks are written as skipped; the rest are counted in the log. */
const MAX_SKIPPED_ROWS = 1_000;

/** The replica's one profile memo (src/ledger/profiles.ts), re-exported for the scheduler's warm-up. */
export { profileOf };

export type ClaimedWorkflow = Workflow & { tenantName: string };

export interface Fire {
  workflow: ClaimedWorkflow;
  /** The tick that fires now: the latest due one. */
  tick: Date;
  /** Older due ticks, recorded as skipped. */
  skipped: Date[];
  nextTickAt: Date;
  timeoutSeconds: number;
  /** Whether the tick fires beside a run of the workflow still running (src/domain/overlap.ts). */
  overlap: OverlapPolicy;
}

/**
 * What each claimed workflow fires. Only the latest due tick fires; older
 * ones fell while no scheduler ran (or while the workflow was paused) and are
 * recorded as skipped, not failed. Cron arithmetic is the main CPU cost at a
 * busy minute boundary, so it is done once per distinct (cron, zone, stored
 * next tick), not per workflow: every `* * * * *` workflow due at 12:00
 * shares one. In the usual case the tick after the stored one is still to
 * come, and that single fire time gives everything: the stored tick fires,
 * nothing was skipped, and it is the next tick.
 */
export function planFires(claimed: ClaimedWorkflow[], now: Date): Fire[] {
  const plans = new Map<string, { tick: Date; skipped: Date[]; nextTickAt: Date }>();
  return claimed.map((workflow) => {
    const scheduled = workflow.nextTickAt!;
    const key = scheduleKey(workflow.cron, workflow.timezone, scheduled);
    let plan = plans.get(key);
    if (!plan) {
      const following = fireAfterScheduled(workflow.cron, workflow.timezone, scheduled, key);
      plan = following > now ? { tick: scheduled, skipped: [], nextTickAt: following } : planAfterGap(workflow.cron, workflow.timezone, scheduled, now);
      plans.set(key, plan);
    }
    const profile = profileOf(workflow, now);
    return { workflow, ...plan, timeoutSeconds: profile.timeoutSeconds, overlap: profile.overlap };
  });
}

/** Ticks were missed: the latest due one fires, the ones between the stored tick and it are skipped. */
function planAfterGap(cron: string, tz: string, scheduled: Date, now: Date) {
  const latestFire = latestFireAtOrBefore(cron, tz, now);
  const tick = latestFire && latestFire > scheduled ? latestFire : scheduled;
  const skipped = [scheduled, ...fireTimesBetween(cron, tz, scheduled, new Date(tick.getTime() - 1), MAX_SKIPPED_ROWS + 1)]
    .filter((s) => s < tick)
    .slice(-MAX_SKIPPED_ROWS);
  // Strictly after now: `tick` is at or before now, so this is the first tick still to come.
  return { tick, skipped, nextTickAt: nextFireAfter(cron, tz, now) };
}

const scheduleKey = (cron: string, tz: string, scheduled: Date) => `${tz}\u0000${scheduled.getTime()}\u0000${cron}`;

/**
 * The fire time after a stored next tick depends on nothing else, so it is
 * kept across batches and ticks (and computed ahead, see warmUpcomingTicks).
 */
const followingFires = new Map<string, Date>();
const FOLLOWING_FIRES_MAX = 50_000;

export function fireAfterScheduled(cron: string, tz: string, scheduled: Date, key = scheduleKey(cron, tz, scheduled)): Date {
  let following = followingFires.get(key);
  if (!following) {
    following = nextFireAfter(cron, tz, scheduled);
    if (followingFires.size >= FOLLOWING_FIRES_MAX) followingFires.clear();
    followingFires.set(key, following);
  }
  return following;
}
