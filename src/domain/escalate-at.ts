import type { Severity } from './cadence.js';
import { latestFireAtOrBefore, nextFireAfter } from './schedule.js';

/** An alert's escalation deadline (DESIGN.md, core idea 6): at its opening, and after its policy changes. */

/** A stretch between fire times this many cadences long or more is the schedule resting (a weekday job's weekend), not a late tick. */
const IDLE_GAP_CADENCES = 2;

/**
 * The most of a cadence the deadline counts: a day. A weekly, monthly, yearly
 * or leap-day job's warning (its first severity overridden: the default is
 * critical) escalated a week, a year or four years after it opened, which is
 * never for anyone on call; now it escalates after multiplier × 1 day, as a
 * daily job's does. The deadline still grows with the cadence up to a day
 * (10 min × 6, 1 h × 3, 1 d × 1) and then stays.
 */
export const MAX_ESCALATION_CADENCE_SECONDS = 86_400;

/**
 * opened_at + multiplier × cadence (a day at most, see above), counted in the workflow's own schedule
 * time: where the schedule rests (no fire time for two cadences or more, as a
 * `0 9 * * 1-5` job over the weekend), the clock stops, since nothing can be
 * seen to fail there. A weekday warning opened on Friday escalates on Monday,
 * not on Saturday. DST's 23 h and 25 h days are not rests.
 *
 * The rest is a gap's part after its first cadence (Friday's tick + 1 day
 * until Monday's tick), and only what of it lies after opened_at stops the
 * clock: an alert opened inside a rest (a late report, a yearly job's
 * failure told months later) starts counting when the schedule resumes.
 * Counting the whole gap instead pushed such a deadline a rest too far, into
 * the next rest, and so on for up to 1000 fire times: a second of CPU per
 * alert and a deadline years out, which stalled the engine (issue 19).
 */
export function escalateAtFor(openedAt: Date, severity: Severity, multiplier: number, cadenceSeconds: number, schedule?: { cron: string; timezone: string }): Date | null {
  if (severity !== 'warning') return null;
  let deadline = openedAt.getTime() + Math.round(multiplier * Math.min(cadenceSeconds, MAX_ESCALATION_CADENCE_SECONDS) * 1000);
  if (!schedule) return new Date(deadline);
  const cadenceMs = cadenceSeconds * 1000;
  let tick = latestFireAtOrBefore(schedule.cron, schedule.timezone, openedAt) ?? openedAt;
  for (let i = 0; i < 1000 && tick.getTime() < deadline; i++) {
    const next = nextFireAfter(schedule.cron, schedule.timezone, tick);
    const gap = next.getTime() - tick.getTime();
    const restFrom = Math.max(tick.getTime() + cadenceMs, openedAt.getTime());
    if (gap >= IDLE_GAP_CADENCES * cadenceMs) deadline += Math.max(0, next.getTime() - restFrom);
    tick = next;
  }
  return new Date(deadline);
}

/**
 * An open, unescalated warning's deadline after its policy changed: moved by
 * the difference between the deadlines the old and the new multiplier give
 * from its opening (the cadence captured then, the schedule now), so the time
 * the escalation clock stood still (a pause, a maintenance window) stays
 * added, and a change that leaves the multiplier alone leaves the deadline
 * where it is. No deadline stays none; an alert whose snapshot never recorded
 * a multiplier gets the new one's deadline from its opening.
 */
export function escalateAtAfterPolicyChange(
  current: Date | null,
  openedAt: Date,
  oldMultiplier: number | undefined,
  newMultiplier: number,
  cadenceSeconds: number,
  schedule?: { cron: string; timezone: string },
): Date | null {
  if (current === null) return null;
  if (oldMultiplier === undefined) return escalateAtFor(openedAt, 'warning', newMultiplier, cadenceSeconds, schedule);
  if (oldMultiplier === newMultiplier) return current;
  const before = escalateAtFor(openedAt, 'warning', oldMultiplier, cadenceSeconds, schedule)!;
  const after = escalateAtFor(openedAt, 'warning', newMultiplier, cadenceSeconds, schedule)!;
  return new Date(current.getTime() + after.getTime() - before.getTime());
}
