import { namesEveryHour, wallIterator } from './cron.js';
import { gapEndBefore, scheduledWallTime } from './schedule.js';
import { MINUTE, zoneOf, type Zone } from './zone.js';

/**
 * What an observed workflow's tick asks of the scheduler outside the bot on
 * a DST night. The bot places every tick by one rule (`schedule.ts`: a time a
 * spring-forward gap skips fires as late as the gap is long; a repeated time
 * fires once, or at both passes for a job naming every hour), and a managed
 * workflow's ticks are fired by that rule. An observed workflow's runs come
 * from a scheduler that has its own rule, and real ones disagree:
 *   - Vixie cron and cronie run a fixed-time job (neither minute nor hour
 *     starts with `*`) whose time was skipped right after the jump, and a
 *     "wildcard" job not at all for the skipped times; on fall-back, a
 *     fixed-time job once (the first pass), a wildcard job at both passes;
 *   - a Kubernetes CronJob (robfig/cron) and BusyBox crond walk real minutes:
 *     a time in the gap never comes (no run that day for `30 2 * * *` in
 *     Berlin), a repeated time comes twice (every job runs at both passes);
 *   - systemd timers and the like run a skipped time when the clock reaches
 *     its moved place (the bot's own rule), a repeated one once.
 * So, for an observed workflow:
 *   - a tick a gap moved may run from the moment the clocks changed to its
 *     moved time, or not at all: with no run it is recorded `skipped` with
 *     the reason, never `missed` (a daily job's one missed tick is a critical
 *     page); a run that does come is its run;
 *   - a tick fired once in a repeated hour (a job not naming every hour) may
 *     run at either pass: it is missed only when neither brings a run, and a
 *     run at the second pass after one at the first is an external run (a
 *     success counts, a failure is no tick's failure);
 *   - the second pass of a job naming every hour may not run (a scheduler
 *     reading wall times once): with no run it is `skipped`, not missed.
 * Every other tick runs at its time, and a tick with no run is missed, DST
 * night or not: a job that really stopped still pages on the ticks every
 * scheduler runs. The tick matcher (`tick-match.ts`) and the freshness
 * detector both ask `observedTickWindow`. Pure.
 */

export interface ObservedTickWindow {
  /** When the tick's run may start on time, oldest first (before the early allowance and the grace). */
  spans: { from: Date; to: Date }[];
  /** Why a reasonable scheduler may not run the tick at all (its `skipped` row's note); null when it must run. */
  mayNotRun: string | null;
}

export function observedTickWindow(cron: string, tz: string, tick: Date): ObservedTickWindow {
  const zone = zoneOf(tz);
  const t = Math.floor(tick.getTime() / MINUTE) * MINUTE;
  const at: ObservedTickWindow = { spans: [{ from: tick, to: tick }], mayNotRun: null };
  // No transition within a day and a half: every wall time happens once.
  if (zone.shiftNear(t) === 0) return at;
  const gapEnd = gapEndBefore(cron, tz, tick);
  if (gapEnd) {
    const skipped = clock(scheduledWallTime(cron, tz, tick));
    const jump = `${clock(zone.wallOf(gapEnd.getTime() - MINUTE) + MINUTE)} → ${clock(zone.wallOf(gapEnd.getTime()))}`;
    return {
      spans: [{ from: gapEnd, to: tick }],
      mayNotRun: `DST: ${skipped} did not exist in ${tz} (${jump}); a scheduler may skip such a time (a Kubernetes CronJob does), so no run is not a failure`,
    };
  }
  const wall = zone.wallOf(t);
  const passes = zone.instantsOf(wall, true);
  if (passes.length < 2) return at;
  const [first, second] = passes as [number, number];
  if (t === second) {
    const change = changeBetween(zone, first, second);
    const back = `${clock(zone.wallOf(change - MINUTE) + MINUTE)} → ${clock(zone.wallOf(change))}`;
    return { ...at, mayNotRun: `DST: ${clock(wall)} came twice in ${tz} (${back}); a scheduler may run it once, so no second run is not a failure` };
  }
  // The first pass of a repeated time, fired once (the job names not every hour): its run may come at either pass.
  return namesEveryHour(cron) ? at : { spans: [at.spans[0]!, { from: new Date(second), to: new Date(second) }], mayNotRun: null };
}

/** Whether a run starting at `startedAt` is on time for the window: within a span, up to `earlyMs` before it or `graceMs` after. */
export function startsInWindow(window: ObservedTickWindow, startedAt: Date, earlyMs: number, graceMs: number): boolean {
  const s = startedAt.getTime();
  return window.spans.some((span) => s >= span.from.getTime() - earlyMs && s <= span.to.getTime() + graceMs);
}

/** When no run can still be the tick's on-time run: the last span's end plus the grace (the freshness detector judges the tick then). */
export function windowClosesAt(window: ObservedTickWindow, graceMs: number): Date {
  return new Date(window.spans.at(-1)!.to.getTime() + graceMs);
}

/**
 * The tick whose repeated wall time's second pass is the latest at or before
 * `at`, for a job that fires such a time once (at its first pass); undefined
 * away from a fall-back night, or for a job naming every hour (its second
 * pass is a tick of its own).
 */
export function repeatedFirstPassBefore(cron: string, tz: string, at: Date): Date | undefined {
  const zone = zoneOf(tz);
  const a = at.getTime();
  if (zone.shiftNear(a) === 0 || namesEveryHour(cron)) return undefined;
  let wall: number;
  try {
    wall = wallIterator(cron, zone.wallOf(a) + MINUTE).prev().getTime();
  } catch {
    return undefined; // nothing earlier
  }
  const passes = zone.instantsOf(wall, true);
  return passes.length === 2 && passes[1]! <= a ? new Date(passes[0]!) : undefined;
}

/** The first minute after `from` with the offset in force at `to` (one transition between them). */
function changeBetween(zone: Zone, from: number, to: number): number {
  const offset = zone.offsetAt(to);
  let before = from;
  let after = to;
  while (after - before > MINUTE) {
    const mid = before + Math.floor((after - before) / MINUTE / 2) * MINUTE;
    if (zone.offsetAt(mid) === offset) after = mid;
    else before = mid;
  }
  return after;
}

/** A UTC-encoded wall time as the clock shows it: `02:30`. */
function clock(wall: number): string {
  return new Date(wall).toISOString().slice(11, 16);
}
