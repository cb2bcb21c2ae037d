import { latestFireAtOrBefore, nextDailyTimeAfter, nextFireAfter, scheduledWallTime, wallTimeAt } from './schedule.js';

/**
 * Runs that take too long, or too little (issue 16). Pure: samples, policy
 * and `now` in, verdicts out.
 *
 * - **Normal duration**: the median of the workflow's newest successful
 *   attempts (at most NORMAL_SAMPLES), with the median absolute deviation as
 *   its spread; robust to a few outliers (one 3-hour night among twenty
 *   20-minute ones moves neither). No verdict before MIN_SAMPLES successes.
 * - **Running long**: still running past max(3 × median, median + 6 × MAD,
 *   median + 10 min, 1.5 × its usual longest), or past the workflow's
 *   `runningLongAfterSeconds` when it sets one. Told only when that comes
 *   before the run's timeout (the timeout tells its own story).
 * - **Usual longest**: a duration the job keeps reaching is no news. A daily
 *   job of 6 minutes whose Sunday full load takes an hour (one success in
 *   seven) has a median of 6 minutes and no spread, so every Sunday was
 *   "running long" at 16 minutes. The duration at least a tenth of the
 *   sampled successes reached, and at least two of them (the k-th longest),
 *   counts as normal too: one slow night is still an outlier.
 * - **Too fast**: a success shorter than `minDurationSeconds` counts as a
 *   failure, like a success with fewer rows than `minRows`.
 * - **Completion deadline**: `completeBy` { time, timeZone } — the tick's run
 *   must have succeeded by the first such local time after the tick.
 */

export const NORMAL_SAMPLES = 50;
export const MIN_SAMPLES = 5;
/** Running long: at least this many times the median… */
export const LONG_FACTOR = 3;
/** …and this many MADs above it… */
export const LONG_MADS = 6;
/** …and at least this much longer than it, so a 1-minute job is not "long" at 3 minutes. */
export const LONG_MIN_EXTRA_SECONDS = 600;
/** …and this many times the usual longest (a duration at least USUAL_SHARE of the successes, and USUAL_MIN_RUNS of them, reached). */
export const USUAL_LONG_FACTOR = 1.5;
export const USUAL_SHARE = 0.1;
export const USUAL_MIN_RUNS = 2;

export interface NormalDuration {
  medianSeconds: number;
  madSeconds: number;
  samples: number;
  /** The longest duration at least USUAL_SHARE of the samples (and USUAL_MIN_RUNS) reached; absent: not known (an older reading). */
  usualLongestSeconds?: number;
}

/** "Finished by 06:00 in Europe/Berlin" for each tick; the zone defaults to the workflow's. */
export interface CompleteBy {
  time: string;
  timeZone?: string;
}

function median(sorted: number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The normal duration of the newest successful attempts (newest first; only the first NORMAL_SAMPLES count), or null before MIN_SAMPLES. */
export function normalDuration(durations: readonly number[]): NormalDuration | null {
  const sample = durations.slice(0, NORMAL_SAMPLES).filter((d) => Number.isFinite(d) && d >= 0);
  if (sample.length < MIN_SAMPLES) return null;
  const m = median([...sample].sort((a, b) => a - b));
  const mad = median(sample.map((d) => Math.abs(d - m)).sort((a, b) => a - b));
  const reachedBy = Math.max(USUAL_MIN_RUNS, Math.ceil(sample.length * USUAL_SHARE));
  const usualLongest = [...sample].sort((a, b) => b - a)[reachedBy - 1]!;
  return { medianSeconds: m, madSeconds: mad, samples: sample.length, usualLongestSeconds: usualLongest };
}

/** Seconds after its start at which a run is running long; null: no verdict (no override, not enough history). */
export function runningLongAfter(normal: NormalDuration | null, overrideSeconds: number | null | undefined): number | null {
  if (overrideSeconds != null) return overrideSeconds;
  if (!normal) return null;
  const { medianSeconds: m, madSeconds: mad, usualLongestSeconds: usual = 0 } = normal;
  return Math.ceil(Math.max(LONG_FACTOR * m, m + LONG_MADS * mad, m + LONG_MIN_EXTRA_SECONDS, USUAL_LONG_FACTOR * usual));
}

export type LongVerdict = { long: false } | { long: true; afterSeconds: number; runningSeconds: number };

/**
 * Is a run that started at `startedAt` running long at `now`? Only before its
 * timeout: a threshold at or past the timeout leaves the verdict to it.
 */
export function runningLongVerdict(input: { startedAt: Date; now: Date; timeoutSeconds: number; normal: NormalDuration | null; overrideSeconds?: number | null }): LongVerdict {
  const after = runningLongAfter(input.normal, input.overrideSeconds);
  if (after === null || after >= input.timeoutSeconds) return { long: false };
  const runningSeconds = Math.floor((input.now.getTime() - input.startedAt.getTime()) / 1000);
  return runningSeconds >= after ? { long: true, afterSeconds: after, runningSeconds } : { long: false };
}

/** A success of `durationSeconds` is too fast to be real under `minDurationSeconds`; an unknown duration never is. */
export function isTooFast(durationSeconds: number | null, minDurationSeconds: number | null | undefined): boolean {
  return minDurationSeconds != null && durationSeconds !== null && durationSeconds < minDurationSeconds;
}

/** What a too-fast run's error group is fingerprinted from: one group whatever the numbers. */
export const TOO_FAST = 'too fast';

export function tooFastError(durationSeconds: number, minDurationSeconds: number): string {
  return `too fast: finished in ${Math.round(durationSeconds)}s, expected at least ${minDurationSeconds}s`;
}

/** "HH:MM", 00:00–23:59. */
export const COMPLETE_BY_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * The completion deadline of `tick`, a fire time of `schedule`: the first
 * `completeBy.time` in its zone after the tick's local time on the local
 * calendar (a 02:00 nightly due by 06:00 is due the same morning; a 23:30 one
 * the next), so it stays 06:00 local across DST. DST follows the schedule's
 * one rule (`nextDailyTimeAfter` in `schedule.ts`): a time the spring-forward
 * gap skips falls due as late as the gap is long, for a tick before it (one
 * after the gap gets the next day's); a time the fall-back night repeats falls
 * due at its first pass, or its second for a tick already past the first. A
 * tick the gap moved counts from the time it was scheduled at, in the
 * workflow's own zone.
 */
export function completionDeadline(tick: Date, completeBy: CompleteBy, schedule: { cron: string; timezone: string }): Date {
  const zone = completeBy.timeZone ?? schedule.timezone;
  const [, hh, mm] = COMPLETE_BY_TIME.exec(completeBy.time) ?? [, '0', '0'];
  const tickWall = zone === schedule.timezone ? scheduledWallTime(schedule.cron, zone, tick) : wallTimeAt(zone, tick);
  return nextDailyTimeAfter(zone, Number(hh), Number(mm), tickWall, tick);
}

/** At most this many ticks back when looking for the newest one whose deadline has passed (a frequent cron with a daily deadline). */
const MAX_TICKS_BACK = 2000;

/**
 * The newest tick whose completion deadline is at or before `now`, with that
 * deadline; undefined when none is (or the schedule has no tick in reach).
 *
 * Remembered per schedule and deadline until the next tick's deadline: the
 * answer cannot change before then (a later tick's deadline is never
 * earlier), and walking back to it costs up to a day of fire times for a
 * frequent cron with a daily deadline (about 0.6 s for `* * * * *`), which
 * the deadline check paid for every such workflow on every pass.
 */
export function latestDueCompletion(schedule: { cron: string; timezone: string }, completeBy: CompleteBy, now: Date): { tick: Date; deadline: Date } | undefined {
  const key = `${schedule.timezone}\u0000${schedule.cron}\u0000${completeBy.time}\u0000${completeBy.timeZone ?? ''}`;
  const t = now.getTime();
  const known = dueMemo.get(key);
  if (known && known.due.deadline.getTime() <= t && t < known.until) return known.due;
  const due = findLatestDueCompletion(schedule, completeBy, now);
  if (due) {
    if (dueMemo.size >= DUE_MEMO_MAX) dueMemo.clear();
    dueMemo.set(key, { due, until: completionDeadline(nextFireAfter(schedule.cron, schedule.timezone, due.tick), completeBy, schedule).getTime() });
  }
  return due;
}

const dueMemo = new Map<string, { due: { tick: Date; deadline: Date }; until: number }>();
const DUE_MEMO_MAX = 10_000;

/** latestDueCompletion without the memo: the newest tick first, one fire time back at a time. */
export function findLatestDueCompletion(schedule: { cron: string; timezone: string }, completeBy: CompleteBy, now: Date): { tick: Date; deadline: Date } | undefined {
  let tick = latestFireAtOrBefore(schedule.cron, schedule.timezone, now);
  for (let i = 0; tick && i < MAX_TICKS_BACK; i++) {
    const deadline = completionDeadline(tick, completeBy, schedule);
    if (deadline.getTime() <= now.getTime()) return { tick, deadline };
    tick = latestFireAtOrBefore(schedule.cron, schedule.timezone, new Date(tick.getTime() - 1));
  }
  return undefined;
}

/**
 * Whether a tick's completion deadline is held against the workflow, given
 * its tick's own row: not when that tick was `skipped` (every replica was
 * away for it: the bot neither fired nor watched it, so a report sent then
 * reached nobody, and the outage is the bot's, not the job's; or a DST night
 * made it a time the outside scheduler may not run). Nor, for the same
 * reason, when it has no row yet and `mayNotRun` (`observed-dst.ts`: an
 * observed tick a reasonable scheduler may not run, which the freshness
 * detector records skipped when its window closes, after the deadline).
 */
export function completionJudged(tickStatus: string | null | undefined, mayNotRun = false): boolean {
  if (tickStatus === undefined || tickStatus === null) return !mayNotRun;
  return tickStatus !== 'skipped';
}
