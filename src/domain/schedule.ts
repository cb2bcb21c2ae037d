import { namesEveryHour, wallIterator } from './cron.js';
import { MINUTE, OFFSET_PROBE_MS, zoneOf, type Zone } from './zone.js';

/**
 * Fire times of a cron expression in a time zone. Nothing here reads the
 * clock: every call is given the instant it starts from.
 *
 * DST trap: cron-parser 5's own `tz` arithmetic breaks where an offset changes
 * by 30 or 45 minutes or at a non-hour boundary. On Lord Howe's fall-back
 * night next() throws "loop limit exceeded" for an hourly job (and returns a
 * time before currentDate after it); on Chatham's it goes backwards; on
 * Chatham's spring-forward night a 02:45 job loses its day. prev() misses a
 * fire time moved by a gap (Berlin's 02:30 run at 03:30 CEST), so the latest
 * fire time disagreed with the next one. So cron-parser only ever walks
 * wall-clock time here (it is given `tz: 'UTC'` and wall times encoded as UTC
 * instants, where it has no DST to get wrong), and this module maps each wall
 * time onto the zone's instants by one rule:
 *   - a wall time that exists once fires then;
 *   - a wall time skipped by a spring-forward gap fires as late as the gap is
 *     long (02:30 in Berlin's gap fires at 03:30 CEST, 01:30 UTC), once: a
 *     time the gap moves onto one that also fires is the same tick;
 *   - a wall time that happens twice (fall back) fires once, at the first,
 *     unless the expression names every hour (`*`, an hourly or sub-hourly
 *     job), which keeps its real spacing and fires at both.
 * Both directions (next and latest) apply the same rule, so a tick the
 * scheduler fires is always a tick that ingest and freshness recognise (an
 * observed workflow's tick may run otherwise, or not at all, by its outside
 * scheduler's rule: `observed-dst.ts` says when its run may come), and a
 * completion deadline (a daily local time, `nextDailyTimeAfter`) falls due by
 * it too. The wall clock and the rule's mapping live in `zone.ts`.
 */

export { checkCron, crontabCheck, normalizeCron, type CronCheck } from './cron.js';

/** Wider than any zone's offset change in one transition (2 h, historically), so no moved fire time is overlooked. */
const SHIFT_WINDOW_MS = 3 * 3_600_000;

/** The first `count` fire times strictly after `from`. */
export function fireTimesAfter(cron: string, tz: string, from: Date, count: number): Date[] {
  const out: Date[] = [];
  let cursor = from;
  for (let i = 0; i < count; i++) {
    cursor = nextFireAfter(cron, tz, cursor);
    out.push(cursor);
  }
  return out;
}

/** The first fire time strictly after `from`. */
export function nextFireAfter(cron: string, tz: string, from: Date): Date {
  const zone = zoneOf(tz);
  const after = from.getTime();
  const shift = zone.shiftNear(after);
  if (shift === 0) {
    // No transition within a day and a half: the zone is a fixed offset here.
    const offset = zone.offsetAt(after);
    const wall = wallIterator(cron, zone.wallOf(after)).next().getTime();
    if (wall - offset - after <= OFFSET_PROBE_MS) return new Date(wall - offset);
    // Further off (a yearly job): no transition near the fire time either means its wall time happens once, there.
    const far = settledInstantOf(zone, wall, offset);
    if (far !== undefined) return new Date(far);
  }
  const everyHour = namesEveryHour(cron);
  // Start early enough to see a wall time before `from`'s that a gap moves past it.
  const window = Math.max(shift, MINUTE);
  const it = wallIterator(cron, zone.wallOf(after) - window);
  let best = Infinity;
  let stopAt = Infinity;
  for (;;) {
    const wall = it.next().getTime();
    if (wall > stopAt) break;
    for (const instant of zone.instantsOf(wall, everyHour)) {
      if (instant > after && instant < best) {
        best = instant;
        // A later wall time can only map before this one by less than one transition's shift.
        stopAt = wall + SHIFT_WINDOW_MS;
      }
    }
  }
  return new Date(best);
}

/**
 * A workflow's next tick when its cron or zone is edited (not resumed or
 * re-enabled: those start from the next tick to come). The stored next tick
 * may already be due and not yet taken: the scheduler claims a moment after
 * the tick's second, the freshness detector waits out an observed tick's
 * grace. When the new schedule fires at that tick too, it is kept, so an
 * edit in the same second as a due tick that both schedules share neither
 * drops it (nothing fired, nothing recorded) nor fires it twice (the tick's
 * one row). Otherwise the new schedule starts from its next fire time.
 */
export function nextTickAfterEdit(cron: string, tz: string, storedNext: Date | null, now: Date): Date {
  if (storedNext && storedNext <= now && nextFireAfter(cron, tz, new Date(storedNext.getTime() - 1)).getTime() === storedNext.getTime()) return storedNext;
  return nextFireAfter(cron, tz, now);
}

/** The latest fire time at or before `at`, if there is one. */
export function latestFireAtOrBefore(cron: string, tz: string, at: Date): Date | undefined {
  const zone = zoneOf(tz);
  const until = at.getTime();
  const shift = zone.shiftNear(until);
  if (shift === 0) {
    const offset = zone.offsetAt(until);
    let wall: number | undefined;
    try {
      // prev() is strictly before its start; a minute-aligned `at` must count as at-or-before.
      wall = wallIterator(cron, zone.wallOf(until) + MINUTE).prev().getTime();
    } catch {
      return undefined; // nothing earlier
    }
    if (until - (wall - offset) <= OFFSET_PROBE_MS && wall - offset <= until) return new Date(wall - offset);
    const far = settledInstantOf(zone, wall, offset);
    if (far !== undefined && far <= until) return new Date(far);
  }
  const everyHour = namesEveryHour(cron);
  const it = wallIterator(cron, zone.wallOf(until) + Math.max(shift, MINUTE) + MINUTE);
  let best = -Infinity;
  let stopAt = -Infinity;
  for (;;) {
    let wall: number;
    try {
      wall = it.prev().getTime();
    } catch {
      break; // nothing earlier
    }
    if (wall < stopAt) break;
    for (const instant of zone.instantsOf(wall, everyHour)) {
      if (instant <= until && instant > best) {
        best = instant;
        stopAt = wall - SHIFT_WINDOW_MS;
      }
    }
  }
  return Number.isFinite(best) ? new Date(best) : undefined;
}

/**
 * When `tick` is a fire time a spring-forward gap moved (its own wall time
 * was skipped: 02:30 on Berlin's spring-forward night fires at 03:30 CEST),
 * the instant that gap ended, when the clocks changed (03:00 CEST); undefined
 * for any other fire time. An outside scheduler may run such a tick from
 * then: Vixie cron and cronie run a fixed-time job whose time was skipped
 * "soon after the change".
 */
export function gapEndBefore(cron: string, tz: string, tick: Date): Date | undefined {
  const zone = zoneOf(tz);
  const t = Math.floor(tick.getTime() / MINUTE) * MINUTE;
  if (zone.shiftNear(t) === 0) return undefined;
  // Its own wall time matches the expression: a fire time where it stands, not one moved there.
  const wall = zone.wallOf(t);
  if (wallIterator(cron, wall - MINUTE).next().getTime() === wall) return undefined;
  const offset = zone.offsetAt(t);
  let before = t - SHIFT_WINDOW_MS;
  if (zone.offsetAt(before) === offset) return undefined;
  // The change is the first minute with the tick's offset (one transition within the window).
  let after = t;
  while (after - before > MINUTE) {
    const mid = before + Math.floor((after - before) / MINUTE / 2) * MINUTE;
    if (zone.offsetAt(mid) === offset) after = mid;
    else before = mid;
  }
  return new Date(after);
}

/**
 * The wall-clock time in `tz` that `tick`, a fire time of `cron`, stands for,
 * as a UTC-encoded instant (minute precision): the clock's reading at the
 * tick, or, for a fire time a spring-forward gap moved, the skipped time it
 * was scheduled at (Berlin's 02:30 fired at 03:30 CEST stands for 02:30).
 */
export function scheduledWallTime(cron: string, tz: string, tick: Date): number {
  const zone = zoneOf(tz);
  const t = Math.floor(tick.getTime() / MINUTE) * MINUTE;
  const gapEnd = gapEndBefore(cron, tz, tick);
  // Moved forward by the gap's length: read with the offset in force before the gap.
  return gapEnd ? t + zone.offsetAt(gapEnd.getTime() - MINUTE) : zone.wallOf(t);
}

/** The clock's reading in `tz` at `instant`, as a UTC-encoded instant (minute precision). */
export function wallTimeAt(tz: string, instant: Date): number {
  return zoneOf(tz).wallOf(instant.getTime());
}

/**
 * When the daily local time `hour:minute` next falls due in `tz`: the first
 * day's `hour:minute` strictly after the wall time `afterWall` on the local
 * calendar, placed by the rule at the top of this file, as the first such
 * instant strictly after `after`. A time the spring-forward gap skips falls
 * due as late as the gap is long (and only for a wall time before it: one
 * already past the gap on the clock gets the next day's); a time the
 * fall-back night repeats falls due at its first pass, or at its second when
 * `after` is already past the first (an hourly job's tick in the repeated
 * hour). The completion deadline (`run-duration.ts`) is this.
 */
export function nextDailyTimeAfter(tz: string, hour: number, minute: number, afterWall: number, after: Date): Date {
  const zone = zoneOf(tz);
  const day = new Date(afterWall);
  for (let d = 0; d < 4; d++) {
    const wall = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + d, hour, minute);
    if (wall <= afterWall) continue;
    // Both passes of a repeated time, in order: the first one after `after` (the rule's first pass unless that is past).
    for (const instant of zone.instantsOf(wall, true)) if (instant > after.getTime()) return new Date(instant);
  }
  throw new Error(`unreachable: no ${hour}:${minute} in ${tz} within four days of ${after.toISOString()}`);
}

/** Every fire time in (from, to], oldest first, at most `limit`. */
export function fireTimesBetween(cron: string, tz: string, from: Date, to: Date, limit = 10_000): Date[] {
  const out: Date[] = [];
  let cursor = from;
  while (out.length < limit) {
    cursor = nextFireAfter(cron, tz, cursor);
    if (cursor > to) break;
    out.push(cursor);
  }
  return out;
}

/**
 * The instant of a fire time's wall time far from `from` (whose offset is
 * `offsetNear`), when no transition is within a day and a half of it: then
 * that wall time happens exactly once. Undefined near a transition (the
 * caller walks the rule at the top of this file).
 */
function settledInstantOf(zone: Zone, wall: number, offsetNear: number): number | undefined {
  const offset = zone.offsetAt(wall - offsetNear);
  const instant = wall - offset;
  return zone.shiftNear(instant) === 0 && zone.offsetAt(instant) === offset ? instant : undefined;
}
