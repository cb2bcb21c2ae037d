import { latestFireAtOrBefore } from './schedule.js';

/**
 * Maintenance windows (issue 13): while one is in force, a workflow's ticks
 * are recorded but not held against it (no failure counts toward an alert,
 * nothing opens, escalates or pages). This module is the one place that
 * decides "is this workflow in maintenance at t"; the poller (which ticks to
 * mark), the escalation clock (which warnings to leave alone) and the
 * maintenance clock (which occurrences to record) all ask it.
 *
 * Windows are half-open, [startsAt, endsAt): a tick at the very minute a
 * window ends counts again.
 */

/** The longest maintenance window, one-off or recurring: a week (a longer one is a pause, not maintenance). */
export const MAINTENANCE_MAX_MS = 7 * 86_400_000;

/**
 * How far ahead a one-off window may start: planned work a quarter away.
 * `startsAt` in year 9999 (a typo, or a script's unset date) was stored and
 * listed forever, silencing nothing while it looked planned.
 */
export const MAINTENANCE_HORIZON_MS = 90 * 86_400_000;

/**
 * What is wrong with a one-off window starting at `startsAt` and lasting
 * `durationMs`, set at `now`, or undefined. It may start in the past (work
 * that began before anyone declared it) as long as it is still in force: a
 * window that has ended already (a start in 1970, or year 0) holds nothing
 * it is asked to hold and would only rewrite how past ticks read.
 */
export function oneOffWindowProblem(startsAt: Date, durationMs: number, now: Date): string | undefined {
  const latest = now.getTime() + MAINTENANCE_HORIZON_MS;
  if (startsAt.getTime() > latest) return `must be at most ${MAINTENANCE_HORIZON_MS / 86_400_000} days ahead (by ${new Date(latest).toISOString()})`;
  const endsAt = startsAt.getTime() + durationMs;
  if (endsAt <= now.getTime()) return `the window would have ended already (at ${new Date(endsAt).toISOString()}); a window may start in the past only while it is still in force`;
  return undefined;
}

export type MaintenanceScope = 'workflow' | 'tenant';

export type MaintenanceRule =
  | { kind: 'once'; startsAt: Date; endsAt: Date; reason: string | null; scope: MaintenanceScope }
  | { kind: 'recurring'; cron: string; timezone: string; durationMs: number; reason: string | null; scope: MaintenanceScope };

export interface ActiveWindow {
  startsAt: Date;
  endsAt: Date;
  reason: string | null;
  scope: MaintenanceScope;
  /** The recurring rule's key (recurrenceKey); null for a one-off window. */
  recurrence: string | null;
}

/** A stable name for a recurring rule: the occurrence rows of one rule share it, so replicas record each occurrence once. */
export function recurrenceKey(rule: { cron: string; timezone: string; durationMs: number }): string {
  return `${rule.cron.trim()}|${rule.timezone}|${rule.durationMs}`;
}

/**
 * The occurrence of a recurring rule that contains `at`, if any. Its start is
 * the rule's latest fire time at or before `at` (src/domain/schedule.ts:
 * cron-parser walked with currentDate and the zone, with that module's DST
 * rule, so a window at 02:30 in Berlin's spring-forward gap opens at 03:30
 * CEST like a job would fire). The latest start has the latest end, so a
 * duration longer than the gap between fire times needs no earlier look.
 * The duration is elapsed time: a 2 h window across a fall-back is 2 h long.
 */
export function occurrenceAt(rule: Extract<MaintenanceRule, { kind: 'recurring' }>, at: Date): ActiveWindow | null {
  const start = latestFireAtOrBefore(rule.cron, rule.timezone, at);
  if (!start) return null;
  const endsAt = new Date(start.getTime() + rule.durationMs);
  if (at.getTime() >= endsAt.getTime()) return null;
  return { startsAt: start, endsAt, reason: rule.reason, scope: rule.scope, recurrence: recurrenceKey(rule) };
}

/**
 * The window in force at `at`, or null. Where windows overlap, the one that
 * ends last wins (it is the one that says how long the workflow stays in
 * maintenance); on a tie, the workflow's own window before the tenant's.
 */
export function maintenanceAt(rules: readonly MaintenanceRule[], at: Date): ActiveWindow | null {
  let best: ActiveWindow | null = null;
  for (const rule of rules) {
    const w =
      rule.kind === 'once'
        ? rule.startsAt.getTime() <= at.getTime() && at.getTime() < rule.endsAt.getTime()
          ? { startsAt: rule.startsAt, endsAt: rule.endsAt, reason: rule.reason, scope: rule.scope, recurrence: null }
          : null
        : occurrenceAt(rule, at);
    if (!w) continue;
    if (!best || w.endsAt.getTime() > best.endsAt.getTime() || (w.endsAt.getTime() === best.endsAt.getTime() && w.scope === 'workflow' && best.scope === 'tenant')) best = w;
  }
  return best;
}

export interface HeldSpan {
  startsAt: Date;
  endsAt: Date;
}

/**
 * The time a recorded window held the escalation clock: a one-off window
 * from when it was set (one set to start in the past held nothing before
 * that: warnings were judged as usual), a recurring occurrence from its
 * start (its rule held the clock before the occurrence's row was written).
 */
export function heldSpanOf(w: { startsAt: Date; endsAt: Date; createdAt: Date; recurrence: string | null }): HeldSpan {
  const startsAt = w.recurrence === null && w.createdAt.getTime() > w.startsAt.getTime() ? w.createdAt : w.startsAt;
  return { startsAt, endsAt: w.endsAt };
}

/**
 * How far an open warning's escalation deadline moves when `window` ends:
 * the part of it from `from` (the alert's opening) on that no `earlier`
 * window already held. "Earlier" is the order ends are told in (end, then
 * id), so over any set of windows, overlapping or not, told in any passes,
 * the moves add up to their union once: two overlapping windows never
 * count the time they share twice.
 */
export function newlyHeldMs(window: HeldSpan, earlier: readonly HeldSpan[], from: Date): number {
  const start = Math.max(window.startsAt.getTime(), from.getTime());
  const end = window.endsAt.getTime();
  if (end <= start) return 0;
  const covered = earlier
    .map((e) => [Math.max(e.startsAt.getTime(), start), Math.min(e.endsAt.getTime(), end)] as const)
    .filter(([a, b]) => a < b)
    .sort((x, y) => x[0] - y[0]);
  let held = 0;
  let reached = start;
  for (const [a, b] of covered) {
    if (a > reached) held += a - reached;
    reached = Math.max(reached, b);
  }
  return held + Math.max(0, end - reached);
}

/**
 * Stored recurring rules (workflows.maintenance / tenants.maintenance jsonb),
 * read defensively: they were validated by the file's schema on the way in,
 * and an entry that no longer has the shape (a hand-edited row) is left out
 * rather than guessed at.
 */
export function recurringRules(stored: unknown, scope: MaintenanceScope): MaintenanceRule[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((r): MaintenanceRule[] => {
    if (!r || typeof r !== 'object') return [];
    const { cron, timezone, durationMs, reason } = r as Record<string, unknown>;
    if (typeof cron !== 'string' || typeof timezone !== 'string' || typeof durationMs !== 'number' || !(durationMs > 0)) return [];
    return [{ kind: 'recurring', cron, timezone, durationMs, reason: typeof reason === 'string' ? reason : null, scope }];
  });
}
