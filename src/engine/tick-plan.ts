import type { Workflow } from '../db/schema.js';
import { fireTimesBetween, latestFireAtOrBefore, nextFireAfter } from '../domain/schedule.js';
import { profileOf } from '../ledger/profiles.js';
import type { OverlapPolicy } from '../domain/overlap.js';
import { catchUpPlan } from '../domain/catch-up.js';

/** After a long outage only this many due ticks of a workflow are written (skipped or missed): the oldest, and the latest. */
const MAX_RECORDED_TICKS = 1_000;

/** The replica's one profile memo (src/ledger/profiles.ts), re-exported for the scheduler's warm-up. */
export { profileOf };

export type ClaimedWorkflow = Workflow & { tenantName: string };

export interface Fire {
  workflow: ClaimedWorkflow;
  /** The tick that fires now: the latest due one, unless it is past its catch-up window (then null). */
  tick: Date | null;
  /** How late it fires, when it is (src/domain/catch-up.ts). */
  lateNote: string | null;
  /** Older due ticks in the catch-up window, recorded skipped: the late run stands for them. */
  skipped: Date[];
  /** Due ticks past the catch-up window, recorded missed. */
  missed: Date[];
  catchUpSeconds: number;
  nextTickAt: Date;
  timeoutSeconds: number;
  /** Whether the tick fires beside a run of the workflow still running (src/domain/overlap.ts). */
  overlap: OverlapPolicy;
}

/** A fire with a tick to launch. */
export type Firing = Fire & { tick: Date };

/**
 * What each claimed workflow fires. The due ticks (every fire time from the
 * stored next tick up to now) are handed to `catchUpPlan`: the latest fires
 * if it is inside the workflow's catch-up window, older ones in the window
 * are skipped, the rest missed. Cron arithmetic is the main CPU cost at a
 * busy minute boundary, so it is done once per distinct (cron, zone, stored
 * next tick), not per workflow: every `* * * * *` workflow due at 12:00
 * shares one. In the usual case the tick after the stored one is still to
 * come, and that single fire time gives everything: the stored tick is the
 * only one due, and the next is the following one.
 */
export function planFires(claimed: ClaimedWorkflow[], now: Date): Fire[] {
  const plans = new Map<string, { due: Date[]; nextTickAt: Date }>();
  return claimed.map((workflow) => {
    const scheduled = workflow.nextTickAt!;
    const key = scheduleKey(workflow.cron, workflow.timezone, scheduled);
    let plan = plans.get(key);
    if (!plan) {
      const following = fireAfterScheduled(workflow.cron, workflow.timezone, scheduled, key);
      plan = following > now ? { due: [scheduled], nextTickAt: following } : dueAfterGap(workflow.cron, workflow.timezone, scheduled, now);
      plans.set(key, plan);
    }
    const profile = profileOf(workflow, now);
    const catchUp = catchUpPlan(plan.due, now, profile.catchUpSeconds);
    return {
      workflow,
      tick: catchUp.fire,
      lateNote: catchUp.lateNote,
      skipped: catchUp.coalesced,
      missed: catchUp.missed,
      catchUpSeconds: profile.catchUpSeconds,
      nextTickAt: plan.nextTickAt,
      timeoutSeconds: profile.timeoutSeconds,
      overlap: profile.overlap,
    };
  });
}

/** Ticks fell due while none fired: the stored one and those after it up to now (at most MAX_RECORDED_TICKS, the latest always among them). */
function dueAfterGap(cron: string, tz: string, scheduled: Date, now: Date) {
  const latestFire = latestFireAtOrBefore(cron, tz, now);
  const latest = latestFire && latestFire > scheduled ? latestFire : scheduled;
  const older = [scheduled, ...fireTimesBetween(cron, tz, scheduled, new Date(latest.getTime() - 1), MAX_RECORDED_TICKS)].filter((s) => s < latest).slice(-(MAX_RECORDED_TICKS - 1));
  // Strictly after now: `latest` is at or before now, so this is the first tick still to come.
  return { due: [...older, latest], nextTickAt: nextFireAfter(cron, tz, now) };
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
