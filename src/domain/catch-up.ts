import { compactDuration } from './durations.js';

/**
 * How late a managed tick may still start, and what becomes of the ticks a
 * scheduler did not fire in time (every replica down for hours, a stalled
 * loop, a database outage). The rule is Kubernetes' CronJob
 * `startingDeadlineSeconds`, bounded by default (systemd's `Persistent=` and
 * graphile-worker's backfill likewise fire once, not once per missed tick):
 *
 * - the latest due tick starts late if it is at most `catchUpSeconds` old;
 *   its row's note says how late;
 * - older due ticks inside the window are `skipped`: the one late run stands
 *   for them (never a flood of launches);
 * - every due tick older than the window is `missed`, a confirmed failure
 *   like an observed tick with no run by its grace (DESIGN.md core idea 8:
 *   silence is data): that work did not run and will not. The bot is the
 *   scheduler of a managed workflow, so its downtime is the job's missed
 *   run, unlike an observed job's that may have run unwatched.
 *
 * The default window is half the cadence (an hourly job may start up to
 * 30 min late, a daily one up to the 6 h cap), at least a minute: never a
 * whole cadence, so a late start does not run into the next tick.
 */

const MIN_SECONDS = 60;
const MAX_SECONDS = 6 * 3600;
/** A fire this late, or less, is a scheduler's ordinary latency: its row carries no note. */
const ON_TIME_MS = 60_000;

export function defaultCatchUpSeconds(cadenceSeconds: number): number {
  return Math.round(Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, cadenceSeconds * 0.5)));
}

export interface CatchUpPlan {
  /** The tick that starts now; null when even the latest is past its window. */
  fire: Date | null;
  /** Why the fire is late, when it is; null when on time. */
  lateNote: string | null;
  /** Older ticks in the window, recorded `skipped`, with the note that says why. */
  coalesced: Date[];
  /** Ticks past the window, recorded `missed`. */
  missed: Date[];
}

/** `due`: the ticks at or before `now` that no run has taken yet, oldest first, at least one. */
export function catchUpPlan(due: readonly Date[], now: Date, catchUpSeconds: number): CatchUpPlan {
  const windowMs = catchUpSeconds * 1000;
  const inWindow = (tick: Date) => now.getTime() - tick.getTime() <= windowMs;
  const latest = due.at(-1)!;
  if (!inWindow(latest)) return { fire: null, lateNote: null, coalesced: [], missed: [...due] };
  const older = due.slice(0, -1);
  const lateMs = now.getTime() - latest.getTime();
  return {
    fire: latest,
    lateNote: lateMs > ON_TIME_MS ? `started ${compactDuration(lateMs)} after its tick (catch-up window ${compactDuration(windowMs)})` : null,
    coalesced: older.filter(inWindow),
    missed: older.filter((t) => !inWindow(t)),
  };
}

/** The note on a tick in the window that the latest tick's late run stands for. */
export function coalescedNote(fired: Date): string {
  return `not fired: the scheduler was late; the run of tick ${fired.toISOString()} stands for it (catch-up)`;
}

/** The error of a tick not fired within its window. */
export function missedTickError(tick: Date, catchUpSeconds: number): string {
  const by = new Date(tick.getTime() + catchUpSeconds * 1000);
  return `missed: not fired by ${by.toISOString()} (catch-up window ${compactDuration(catchUpSeconds * 1000)}); no scheduler ran it in time`;
}
