import type { Workflow } from '../db/schema.js';
import { profileFor, type CadenceProfile } from '../domain/cadence.js';

/** Profiles are reused within this span of clock time (see below). */
const SPAN_MS = 3_600_000;
const MAX_ENTRIES = 20_000;

/**
 * The replica's one memo of cadence profiles, shared by every loop that
 * needs one per row (the poller, the tick scheduler, the freshness detector).
 * Deriving a profile walks up to 65 fire times (eight years of them at most,
 * domain/cadence.ts) through cron-parser, which was a
 * third of the poller's CPU; within a batch and across batches the same few
 * (cron, zone, overrides) recur.
 *
 * Invalidation: the key holds every input profileFor reads (cron, zone,
 * policy) and the hour of `now`, so an edited workflow is a new key and never
 * sees a stale profile; old keys are dropped all at once when the memo is
 * full. The median gap over the next 64 fires does not move within an hour (a
 * DST night changes one gap, not the median), and the profile still follows
 * the clock it is given, so a ManualClock sees the same answers as the plain
 * function.
 */
const memo = new Map<string, CadenceProfile>();

/** profileFor, memoised (see above). */
export function profileOf(workflow: Pick<Workflow, 'cron' | 'timezone' | 'policy'>, now: Date): CadenceProfile {
  const key = `${Math.floor(now.getTime() / SPAN_MS)}\u0000${workflow.cron}\u0000${workflow.timezone}\u0000${JSON.stringify(workflow.policy ?? {})}`;
  let profile = memo.get(key);
  if (!profile) {
    if (memo.size >= MAX_ENTRIES) memo.clear();
    profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
    memo.set(key, profile);
  }
  return profile;
}
