/**
 * The escalation clock's rules (DESIGN.md core idea 6; issue 13), each one
 * pure function of the alert's fields and `now`. The engine's loop
 * (src/engine/escalation.ts) locks candidates and asks these; nothing else
 * decides.
 */

import { newlyHeldMs, type HeldSpan } from './maintenance.js';

export interface EscalationFields {
  status: string;
  severity: string;
  acknowledgedAt: Date | null;
  escalateAt: Date | null;
  consecutiveFailures: number;
  /** The policy snapshotted at opening (escalateAfterFailures is derived there). */
  policy: Record<string, unknown>;
  /**
   * The consecutive failures the alert had counted when its workflow was last
   * resumed (its `workflow_resumed` event), if it was: those were known while
   * it stood paused, so they alone do not make it "keep failing".
   */
  failuresAtResume?: number | null;
  openedAt?: Date;
  /**
   * The newest failure the alert counted (its last run). A streak whose newest
   * failure is a tick recorded missed that fell due before the alert opened
   * was all known when it opened, however long: an every-minute managed job's
   * 179 ticks recorded missed at once after the bot's own downtime (catch-up),
   * or an observed job's ticks recorded together after the detector stalled.
   * It alone is not "kept failing"; a tick after the opening that fails or is
   * missed, or a run that fails, is. Absent: the count alone decides.
   */
  newestFailure?: { tick: Date | null; status: string } | null;
}

export type EscalationDecision = { due: false } | { due: true; reason: 'kept_failing' | 'deadline' };

/**
 * An open warning nobody has taken ownership of becomes critical when the
 * workflow kept failing since it opened (consecutive failures reach the
 * snapshotted escalateAfterFailures) or when escalate_at passes. Kept failing
 * is the reason given when both hold.
 */
export function escalationDue(alert: EscalationFields, now: Date): EscalationDecision {
  if (!escalates(alert)) return { due: false };
  if (keptFailing(alert)) return { due: true, reason: 'kept_failing' };
  if (alert.escalateAt && alert.escalateAt.getTime() <= now.getTime()) return { due: true, reason: 'deadline' };
  return { due: false };
}

/**
 * When escalationDue first says yes for the alert as it stands: `now` when it
 * already kept failing, else its deadline; null when it never will (owned,
 * critical, resolved, or no deadline). For a driver deciding when to look
 * next (the replay); a new failure can only make it sooner, and that comes
 * with a poll.
 */
export function escalationDueAt(alert: EscalationFields, now: Date): Date | null {
  if (!escalates(alert)) return null;
  return keptFailing(alert) ? now : alert.escalateAt;
}

/** Only an open warning nobody has taken ownership of can escalate. */
function escalates(alert: EscalationFields): boolean {
  return alert.status === 'open' && alert.severity === 'warning' && alert.acknowledgedAt === null;
}

/**
 * The failures since opening reached the snapshotted escalateAfterFailures (an
 * old snapshot without one never does), unless the newest of them is a tick
 * recorded missed before the opening (`newestFailure`). After a pause, the failures reported
 * while it stood count, but a resume alone pages nobody: it takes a failure
 * after the resume (an operator who paused it knew; one who resumed it
 * thinks it fixed, and the next run says whether it is).
 */
function keptFailing(alert: EscalationFields): boolean {
  if (alert.failuresAtResume != null && alert.consecutiveFailures <= alert.failuresAtResume) return false;
  if (knownMissedStreak(alert)) return false;
  return alert.consecutiveFailures >= Number(alert.policy.escalateAfterFailures ?? Number.POSITIVE_INFINITY);
}

/** The alert's newest failure is a tick recorded missed that fell due before it opened (`newestFailure`). */
function knownMissedStreak(alert: EscalationFields): boolean {
  const newest = alert.newestFailure;
  return Boolean(alert.openedAt && newest?.tick && newest.status === 'missed' && newest.tick.getTime() < alert.openedAt.getTime());
}

/**
 * An open warning's deadline when its workflow is resumed: moved by the time
 * its escalation clock stood still, which is the pause since the later of
 * the pause and the alert's opening (an alert opened while the workflow was
 * paused, on a report from outside, had no clock running before it opened,
 * so moving it by the whole pause pushed it that much too far), less what
 * the maintenance windows already told (`toldWindows`) held of it: a pause
 * and a window over the same hour move the deadline by that hour once
 * (`newlyHeldMs`, src/domain/maintenance.ts). No deadline, a critical, or no
 * time stood: unchanged.
 */
export function escalateAtAfterPause(
  alert: { severity: string; escalateAt: Date | null; openedAt: Date },
  pausedAt: Date | null,
  now: Date,
  toldWindows: readonly HeldSpan[] = [],
): Date | null {
  if (!alert.escalateAt || alert.severity !== 'warning' || !pausedAt) return alert.escalateAt;
  const stoodMs = newlyHeldMs({ startsAt: pausedAt, endsAt: now }, toldWindows, alert.openedAt);
  return new Date(alert.escalateAt.getTime() + stoodMs);
}

/**
 * The pauses an alert's escalation clock has stood still for and that have
 * ended, from its thread's `workflow_paused` / `workflow_resumed` events in
 * order (a resume with no pause before it: the workflow was paused when the
 * alert opened). A maintenance window told after them moves the deadline
 * only by what they did not already hold. The pause still going is not one:
 * its resume counts the window instead.
 */
export function endedPauses(events: readonly { kind: string; at: Date }[], openedAt: Date): HeldSpan[] {
  const spans: HeldSpan[] = [];
  let since: Date | null = null;
  for (const e of events) {
    if (e.kind === 'workflow_paused') since ??= e.at;
    else if (e.kind === 'workflow_resumed') {
      spans.push({ startsAt: since ?? openedAt, endsAt: e.at });
      since = null;
    }
  }
  return spans;
}

export interface Mention {
  users: string[];
  groups: string[];
}

/** Who an escalation pages: the owner if there is one, else the tenant's on-call (group and users). */
export function escalationMention(ownerUser: string | null, oncall: { group?: string; users?: readonly string[] }): Mention {
  if (ownerUser) return { users: [ownerUser], groups: [] };
  return { users: [...(oncall.users ?? [])], groups: oncall.group ? [oncall.group] : [] };
}

export interface ReminderFields {
  status: string;
  ownerUser: string | null;
  acknowledgedAt: Date | null;
  silencedBy: string | null;
  silencedUntil: Date | null;
  remindedAt: Date | null;
  cadenceSeconds: number;
  policy: Record<string, unknown>;
  /** The workflow is paused: an operator said to stop; it reminds nobody until resumed. */
  workflowPaused?: boolean;
  /**
   * Reminders to the owner (their `reminder` events) since they took the
   * alert or last acted on it (an event of theirs), counted from the thread's
   * history: how many went unanswered.
   */
  unansweredReminders?: number;
  /** With `openedAt`, `escalatedAt` and `lastFailureAt`: an unowned critical alert re-pages its on-call (`unownedCriticalSince`). */
  severity?: string;
  openedAt?: Date;
  escalatedAt?: Date | null;
  /** When the alert last recorded a failure (its error group's last occurrence). */
  lastFailureAt?: Date | null;
}

/** A day: how often an "until resolved" silence reminds in its thread, and the longest gap between an owner's reminders. */
export const SILENCE_REMINDER_MS = 86_400_000;

/**
 * The first reminder period for an owned alert that keeps failing: twice
 * its cadence, at least 30 minutes and at most a day (a 5-minute job reminds
 * after 30 minutes, an hourly one after 2 hours, a daily one after a day).
 */
export function defaultRemindAfterMs(cadenceSeconds: number): number {
  return Math.min(Math.max(2 * cadenceSeconds * 1000, 30 * 60_000), 86_400_000);
}

/**
 * A reminder rule of the alert's policy: the value it was opened with or a
 * policy change gave it (a top-level field, null: the default), else, for an
 * alert opened before those were kept, its workflow's overrides at opening.
 */
function reminderRule(policy: Record<string, unknown>, field: 'remindAfterSeconds' | 'ownershipLapsesAfterReminders'): unknown {
  return field in policy ? policy[field] : ((policy.overrides ?? {}) as Record<string, unknown>)[field];
}

/** The workflow's own `remindAfterSeconds`, when it sets one. */
function ownRemindAfterMs(policy: Record<string, unknown>): number | undefined {
  const own = reminderRule(policy, 'remindAfterSeconds');
  return typeof own === 'number' && own > 0 ? own * 1000 : undefined;
}

/**
 * The wait before the next reminder to the owner. A workflow's own
 * `remindAfterSeconds` is a fixed period (someone chose it). The default
 * doubles: the first after the cadence's period, each later one after as
 * long as the ownership had lasted at the reminder before it (30 min, 30
 * min, 1 h, 2 h, 4 h… for a 5-minute job), at most a day. An owner who took
 * a 5-minute job's alert at 17:00 gets six reminders by 09:00 (17:30, 18:00,
 * 19:00, 21:00, 01:00, 09:00), not
 * thirty-two; the thread keeps the record, not a wall of nudges. Whether a
 * mention buzzes at night is the owner's own Slack notification schedule
 * (Do Not Disturb, in their zone): the bot does not guess their hours.
 */
export function nextReminderAfterMs(alert: Pick<ReminderFields, 'cadenceSeconds' | 'policy' | 'remindedAt' | 'acknowledgedAt'>): number {
  const own = ownRemindAfterMs(alert.policy);
  if (own !== undefined) return own;
  const first = defaultRemindAfterMs(alert.cadenceSeconds);
  const { remindedAt, acknowledgedAt } = alert;
  if (!remindedAt || !acknowledgedAt || remindedAt.getTime() <= acknowledgedAt.getTime()) return first;
  return Math.min(Math.max(first, remindedAt.getTime() - acknowledgedAt.getTime()), SILENCE_REMINDER_MS);
}

export type ReminderDecision =
  | { due: false }
  | { due: true; about: 'owned'; ownerUser: string; since: Date }
  /** Instead of one more reminder: the owner left that many unanswered, so the ownership lapses and the on-call is told. */
  | { due: true; about: 'lapsed'; ownerUser: string; since: Date; reminders: number }
  | { due: true; about: 'silenced'; since: Date }
  /** A critical alert nobody owns: the on-call is paged again (in the thread, not broadcast). */
  | { due: true; about: 'unowned'; since: Date };

/**
 * Since when an open critical alert has been critical (its escalation, or its
 * opening when it opened critical); undefined for a warning, whose own
 * escalation is what pages.
 */
function unownedCriticalSince(alert: ReminderFields): Date | undefined {
  if (alert.severity !== 'critical' || !alert.openedAt) return undefined;
  return alert.escalatedAt ?? alert.openedAt;
}

/**
 * How many unanswered reminders an ownership survives: the workflow's
 * `ownershipLapsesAfterReminders` (0: never lapses this way), else 3. With
 * the default periods (doubling, at most a day apart) the lapse comes 8 ×
 * the first period after the owner last acted (a 5-minute job: 4 hours; an
 * hourly one: 16 hours; a daily one: 4 days), long enough for someone
 * working on it to answer, short enough that
 * an owner who left (holiday, another job) does not keep an alert from the
 * on-call for ever.
 */
export const DEFAULT_LAPSE_AFTER_REMINDERS = 3;

export function lapseAfterReminders(policy: Record<string, unknown>): number {
  const own = reminderRule(policy, 'ownershipLapsesAfterReminders');
  return typeof own === 'number' && Number.isInteger(own) && own >= 0 ? own : DEFAULT_LAPSE_AFTER_REMINDERS;
}

/**
 * Is a reminder due? An owned, still open alert reminds its owner after
 * `nextReminderAfterMs`, counted from when it was owned or last reminded; an
 * "until resolved" silence reminds once a day counted from reminded_at, which
 * the silence sets when it begins. A silenced alert does not remind its
 * owner: the silence reminder speaks for it. When the owner has left
 * `lapseAfterReminders` reminders unanswered (acted on the alert after none of
 * them), the next one is not sent: the ownership lapses instead. A critical
 * alert nobody owns pages its on-call again on the same periods when it failed
 * again since its last page, counted from when it became critical (a lapse or release sets reminded_at, so the next
 * page counts from it). A paused workflow reminds
 * nobody (its escalation clock stands still too); the count goes on from
 * where it was when it is resumed.
 */
export function reminderDue(alert: ReminderFields, now: Date): ReminderDecision {
  if (alert.status !== 'open' || alert.workflowPaused) return { due: false };
  const t = now.getTime();
  if (alert.silencedBy) {
    if (alert.silencedUntil !== null || !alert.remindedAt) return { due: false };
    if (t - alert.remindedAt.getTime() < SILENCE_REMINDER_MS) return { due: false };
    return { due: true, about: 'silenced', since: alert.remindedAt };
  }
  if (!alert.ownerUser || !alert.acknowledgedAt) {
    // Nobody took the page: it comes again while the job keeps failing, on the owner's doubling periods counted from
    // the page (30 min, 30 min, 1 h… for a 5-minute job, at most a day apart; a nightly job failing each night once a
    // day), so one missed page never leaves a critical alert unseen for days.
    const since = unownedCriticalSince(alert);
    if (!since) return { due: false };
    const from = Math.max(alert.remindedAt?.getTime() ?? 0, since.getTime());
    if (t - from < nextReminderAfterMs({ ...alert, acknowledgedAt: since })) return { due: false };
    // Only news pages again: a failure since the last page (a monthly job's one failure pages once, not daily for a month).
    if (!alert.lastFailureAt || alert.lastFailureAt.getTime() <= from) return { due: false };
    return { due: true, about: 'unowned', since };
  }
  const from = Math.max(alert.remindedAt?.getTime() ?? 0, alert.acknowledgedAt.getTime());
  if (t - from < nextReminderAfterMs(alert)) return { due: false };
  const limit = lapseAfterReminders(alert.policy);
  const unanswered = alert.unansweredReminders ?? 0;
  if (limit > 0 && unanswered >= limit) return { due: true, about: 'lapsed', ownerUser: alert.ownerUser, since: alert.acknowledgedAt, reminders: unanswered };
  return { due: true, about: 'owned', ownerUser: alert.ownerUser, since: alert.acknowledgedAt };
}

/** Has the ownership lapsed (the tenant's ownershipExpiresAfter; null: never)? */
export function ownershipExpired(alert: Pick<ReminderFields, 'status' | 'ownerUser' | 'acknowledgedAt'>, expiresAfterSeconds: number | null, now: Date): boolean {
  if (alert.status !== 'open' || !alert.ownerUser || !alert.acknowledgedAt || !expiresAfterSeconds) return false;
  return now.getTime() - alert.acknowledgedAt.getTime() >= expiresAfterSeconds * 1000;
}
