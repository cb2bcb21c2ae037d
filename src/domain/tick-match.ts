import { observedTickWindow, repeatedFirstPassBefore, startsInWindow } from './observed-dst.js';
import { formatDuration } from './durations.js';
import { latestFireAtOrBefore, nextFireAfter } from './schedule.js';

/**
 * Which tick a run reported from outside belongs to, when the report names
 * none (a ping, or an API call without `tick`). The ledger tries the
 * candidates in order and takes the first whose tick has no row yet; with
 * none left the run is external (outside any tick).
 */

/** The most an observed run may start before its tick and still be its run (see earlyStartMs). */
export const EARLY_START_MAX_SECONDS = 300;

/**
 * How long before its tick an observed workflow's run may start and still be
 * that tick's run: a tenth of the cadence, at most five minutes. The outside
 * scheduler keeps its own clock, and a host running a second ahead of the
 * bot's reports its start a second before the tick; counted as outside any
 * tick, every such start left its tick "missed" (a failure) although the run
 * was there. A host whose NTP is broken runs minutes ahead: capped at a
 * minute, a daily job started three minutes early paged critical "missed"
 * every night for a job that ran. A tenth of the cadence keeps a frequent
 * job's early start from being taken for the next tick's.
 */
export function earlyStartMs(cadenceSeconds: number): number {
  return Math.round(Math.min(EARLY_START_MAX_SECONDS, cadenceSeconds / 10) * 1000);
}

/**
 * The earliest tick a report may name: the Unix epoch. From then on every
 * zone's offsets are whole minutes (src/domain/zone.ts); before it zones kept
 * local mean time (Amsterdam +00:19:32), so "fire times" fell at odd minutes,
 * and no workflow of the bot's had ticks. A tick in year 1 or 0 named over the
 * API once sent the fire-time search back through every hour of the centuries
 * between, holding the replica's event loop for minutes.
 */
export const EARLIEST_TICK = new Date(0);

/**
 * Whether a report naming its tick came before that tick (a 400): later than
 * now by more than an observed workflow's early allowance (earlyStartMs). A
 * job whose host runs a second ahead of the bot names its tick a second
 * early; refused, its start was lost and the tick recorded missed. A managed
 * workflow's ticks are the scheduler's: none of them is reported early.
 */
export function isFutureTick(tick: Date, now: Date, schedule: { mode: string }, cadenceSeconds: number): boolean {
  const allowance = schedule.mode === 'observed' ? earlyStartMs(cadenceSeconds) : 0;
  return tick.getTime() - now.getTime() > allowance;
}

/**
 * The ticks a run that starts at `startedAt` may be the run of, in the order
 * to try them: the latest fire time at or before the start, within the
 * grace; then, for an observed workflow only, the tick fired at the first
 * pass of a repeated hour whose second pass the start is at (a Kubernetes
 * CronJob runs `30 1 * * *` at both passes of New York's fall-back night),
 * and the next fire time when it is at most earlyStartMs away, or when a
 * spring-forward gap moved it and the start is no earlier than the clocks
 * changed (less earlyStartMs): the bot places 02:30 on Berlin's
 * spring-forward night at 03:30 CEST, but cron runs a job whose time was
 * skipped as soon as the clocks change, at 03:00. When an observed tick's
 * run may start is decided once, in `observed-dst.ts`. A managed workflow's
 * ticks are the scheduler's own (it fires them on the bot's clock): an
 * outside report just before one must not take it, or the scheduler would
 * not launch it.
 */
export function tickCandidates(
  schedule: { cron: string; timezone: string; mode: string },
  startedAt: Date,
  profile: { graceSeconds: number; cadenceSeconds: number },
): Date[] {
  const { cron, timezone } = schedule;
  const graceMs = profile.graceSeconds * 1000;
  const latest = latestFireAtOrBefore(cron, timezone, startedAt);
  if (schedule.mode !== 'observed') return latest && startedAt.getTime() - latest.getTime() <= graceMs ? [latest] : [];
  const earlyMs = earlyStartMs(profile.cadenceSeconds);
  const near = [latest, repeatedFirstPassBefore(cron, timezone, new Date(startedAt.getTime() + earlyMs)), nextFireAfter(cron, timezone, startedAt)];
  const out: Date[] = [];
  for (const tick of near) {
    if (!tick || out.some((t) => t.getTime() === tick.getTime())) continue;
    if (startsInWindow(observedTickWindow(cron, timezone, tick), startedAt, earlyMs, graceMs)) out.push(tick);
  }
  return out;
}

/**
 * The tick a run reported only by its end may still be the report of when no
 * candidate above is: the latest fire time at or before its start, up to the
 * workflow's timeout after it (observed workflows only, whose ticks the freshness detector records
 * missed at tick + grace). A job that sends no start and runs longer than
 * the grace has its tick recorded missed before its end arrives; that end is
 * the tick's report, late, not a run outside any tick (src/ledger/reported-runs.ts).
 */
export function lateTickOfEnd(
  schedule: { cron: string; timezone: string; mode: string },
  startedAt: Date,
  profile: { graceSeconds: number; timeoutSeconds: number },
): Date | undefined {
  if (schedule.mode !== 'observed') return undefined;
  const latest = latestFireAtOrBefore(schedule.cron, schedule.timezone, startedAt);
  if (!latest) return undefined;
  const afterTickMs = startedAt.getTime() - latest.getTime();
  // Past the timeout the end cannot be that tick's: a run reported started then would have been failed as timed out.
  if (afterTickMs <= profile.graceSeconds * 1000 || afterTickMs > profile.timeoutSeconds * 1000) return undefined;
  return latest;
}

/** How long after its tick's grace ended a report came (0 when within it). */
export function reportedAfterGraceMs(tick: Date, reportedAt: Date, graceSeconds: number): number {
  return Math.max(0, reportedAt.getTime() - tick.getTime() - graceSeconds * 1000);
}

/**
 * A grace that would have covered a report coming this long after its tick:
 * a fifth more, rounded up to a whole minute (under ten minutes), five
 * minutes (under two hours), else a quarter hour. Advice for the thread, not a rule.
 */
export function graceToCoverSeconds(afterTickMs: number): number {
  const seconds = (afterTickMs / 1000) * 1.2;
  const step = seconds < 600 ? 60 : seconds < 7200 ? 300 : 900;
  return Math.max(step, Math.ceil(seconds / step) * step);
}

/**
 * A tick's run whose report came only after its grace (a late end that took
 * the tick's row, see lateTickOfEnd): how late, and a grace that would have
 * covered it. Null for a run that started within its grace.
 */
export function lateReportOf(run: { tick: Date | null; startedAt: Date | null; finishedAt: Date | null }, graceSeconds: number): { afterGraceSeconds: number; graceToCoverSeconds: number } | null {
  if (!run.tick || !run.startedAt || !run.finishedAt) return null;
  if (run.startedAt.getTime() - run.tick.getTime() <= graceSeconds * 1000) return null;
  return {
    afterGraceSeconds: Math.round(reportedAfterGraceMs(run.tick, run.finishedAt, graceSeconds) / 1000),
    graceToCoverSeconds: graceToCoverSeconds(run.finishedAt.getTime() - run.tick.getTime()),
  };
}

/**
 * Why a run of an observed workflow fell outside every tick, when its start
 * says: it is on time for a fire time of the same cron in UTC, which is not a
 * fire time in the declared zone. A crontab on a host kept in UTC (most
 * servers) runs `0 2 * * *` at 02:00 UTC, not at 02:00 in the declared
 * zone: each of its ticks was recorded missed (a daily job pages critical)
 * and each run came an hour or two away from it, outside any tick, with
 * nothing telling the operator why. The note goes on the run (History, the
 * runs API). Null when the start says nothing of the kind.
 */
export function utcCrontabNote(schedule: { cron: string; timezone: string; mode: string }, startedAt: Date, profile: { graceSeconds: number; cadenceSeconds: number }): string | null {
  if (schedule.mode !== 'observed' || schedule.timezone === 'UTC' || schedule.timezone === 'Etc/UTC') return null;
  const utcTick = tickCandidates({ ...schedule, timezone: 'UTC' }, startedAt, profile)[0];
  if (!utcTick || latestFireAtOrBefore(schedule.cron, schedule.timezone, utcTick)?.getTime() === utcTick.getTime()) return null;
  const hhmm = utcTick.toISOString().slice(11, 16);
  return `started on time for ${hhmm} UTC, a fire time of "${schedule.cron}" in UTC but not in ${schedule.timezone}, so it is outside every tick: if the job's crontab runs in UTC, put CRON_TZ=${schedule.timezone} above it (or declare timezone UTC)`;
}

/**
 * A start that came after its tick's grace (the latest fire time at or
 * before it, within the timeout: `lateTickOfEnd`'s window), for a tick that
 * has no run of its own. The tick is missed (no run started in time, DESIGN
 * core idea 8) and the start is a run outside any tick, so nothing tied the
 * two: the note says how late it came and what grace would have covered it,
 * as a late end's recovery does (`lateReportOf`).
 */
export function lateStartNote(tick: Date, startedAt: Date, graceSeconds: number, timezone: string): string {
  const afterMs = startedAt.getTime() - tick.getTime();
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(tick);
  const zone = timezone === 'Etc/UTC' ? 'UTC' : timezone;
  return `started ${formatDuration(afterMs)} after its ${local} ${zone} tick, past the tick's grace (${formatDuration(graceSeconds * 1000)}), so the tick was recorded missed: if this is that tick's run, consider graceSeconds: ${graceToCoverSeconds(afterMs)} or more`;
}
