/**
 * Storms and shared causes (issue 16): the pure rules. The ledger claims what
 * these decide (src/services/storm-claims.ts, src/engine/storm-clock.ts);
 * docs/alerts.md "Storms" describes them with their defaults.
 */

import { inShadow, IN_SHADOW_SQL } from './shadow.js';

export interface StormRule {
  /** Openings in one channel within `windowSeconds` (this one included) that make a storm; 0 turns storms off. */
  minAlerts: number;
  windowSeconds: number;
}

export const DEFAULT_STORM_RULE: StormRule = { minAlerts: 5, windowSeconds: 120 };

export type StormDecision =
  /** An ordinary opening: the alert posts its own root. */
  | { kind: 'root' }
  /** The opening that makes a storm: a storm starts and takes in the window's openings not yet posted. */
  | { kind: 'start' }
  /** The channel's storm is still growing (or a new burst arrives while it is open): the opening joins it. */
  | { kind: 'join' };

/**
 * Is an opening in a channel part of a storm? `openingsInWindow` counts the
 * openings sent to that channel in the last `windowSeconds`, this one
 * included; `storm` is the channel's active storm, if any.
 */
export function stormDecision(input: { openingsInWindow: number; storm: { lastJoinedAt: Date } | null; now: Date; rule: StormRule }): StormDecision {
  const { rule, storm, now } = input;
  if (rule.minAlerts <= 0) return { kind: 'root' };
  if (storm && now.getTime() - storm.lastJoinedAt.getTime() <= rule.windowSeconds * 1000) return { kind: 'join' };
  if (input.openingsInWindow >= rule.minAlerts) return storm ? { kind: 'join' } : { kind: 'start' };
  return { kind: 'root' };
}

/**
 * Does an opening count toward a storm in its channel (and may a storm take
 * it in)? Not an alert in shadow (its event data says `shadow`): it is told
 * only to the audit destination, the platform channel, and must change
 * nothing there for live alerts; a shadow tenant's burst would otherwise
 * start a storm that folds live alerts' roots into one message. A shadow
 * opening posts its own root, marked Shadow. The claim's statements apply
 * the same rule (`STORM_OPENING_SQL`, over an `alert_events e`).
 */
export function countsTowardStorm(eventData: unknown): boolean {
  return (eventData as { shadow?: unknown } | null)?.shadow !== true;
}

/** `countsTowardStorm` as a condition on `alert_events e`. */
export const STORM_OPENING_SQL = "coalesce(e.data->'shadow', 'false'::jsonb) <> 'true'::jsonb";

/**
 * When a storm ends: it has stopped growing (no opening joined for the
 * window) and fewer of its alerts are still open than it takes to make a
 * storm. Each alert still open then outlives the storm: it gets a thread of
 * its own. With the default of 5, at most 4 threads follow a storm's end, and
 * a storm whose alerts all stay open stays one message.
 */
export function stormEnds(input: { lastJoinedAt: Date; openMembers: number; now: Date; rule: StormRule }): boolean {
  const { rule } = input;
  const growing = input.now.getTime() - input.lastJoinedAt.getTime() <= rule.windowSeconds * 1000;
  return !growing && input.openMembers < Math.max(rule.minAlerts, 1);
}

export interface SharedCauseRule {
  /** Distinct workflows with an open alert in one error group that make it a shared cause; 0 turns it off. */
  minWorkflows: number;
  /** The window: the group's alerts must have failed within it; one callout per group per window. */
  windowSeconds: number;
}

export const DEFAULT_SHARED_CAUSE_RULE: SharedCauseRule = { minWorkflows: 3, windowSeconds: 3600 };

/**
 * The window a callout is claimed for (seed 002: group + window start is the
 * uniqueness key): windows are fixed, aligned on the epoch, so every replica
 * names the same one.
 */
export function sharedCauseWindow(now: Date, rule: SharedCauseRule): { start: Date; since: Date } {
  const ms = rule.windowSeconds * 1000;
  return { start: new Date(Math.floor(now.getTime() / ms) * ms), since: new Date(now.getTime() - ms) };
}

/**
 * May an open alert count toward a shared-cause callout, and carry it (the
 * callout is told in the group's newest such alert's thread)? The rule of
 * `countsTowardStorm`: not an alert in shadow. The callout is decided
 * later than an opening, so it asks whether the alert is in shadow now (its
 * workflow's or its tenant's flag, what routes the callout's own event): an
 * alert that has gone live counts, one whose workflow went into shadow does
 * not. A shadow alert would otherwise make up a live callout's numbers, or
 * carry it into a thread marked Shadow, where nobody is told. The claim's
 * statements apply it as `SHARED_CAUSE_MEMBER_SQL`.
 */
export function countsTowardSharedCause(alert: { workflowShadow: boolean; tenantShadow: boolean }): boolean {
  return !inShadow(alert);
}

/** `countsTowardSharedCause` as a condition on `workflows w` joined with `tenants t`. */
export const SHARED_CAUSE_MEMBER_SQL = `not ${IN_SHADOW_SQL}`;

/** Is an error group a shared cause: seen in enough distinct workflows (of any tenants) inside the window? */
export function isSharedCause(workflowsInWindow: number, rule: SharedCauseRule): boolean {
  return rule.minWorkflows > 0 && workflowsInWindow >= rule.minWorkflows;
}

/** The key a storm message's metadata carries, found again in the channel after an unknown outcome. */
export function stormKey(stormId: number, destination: string): string {
  return `storm:${stormId}:${destination}`;
}

/**
 * How long a page posted in a storm's thread stands for the storm's later
 * pages of the same people: 30 alerts escalating at one deadline page the
 * on-call once, not thirty broadcast replies in a minute; the storm message
 * shows each one critical.
 */
export const STORM_PAGE_FOLD_MS = 30 * 60_000;

const mentioned = (data: unknown): string[] => {
  const m = (data as { mention?: { users?: unknown[]; groups?: unknown[] } } | null)?.mention;
  return [...(m?.users ?? []), ...(m?.groups ?? [])].filter((x): x is string => typeof x === 'string');
};

/**
 * Does a member's page (its event's data) fold into the storm message? Yes
 * when pages already posted in the storm's thread within STORM_PAGE_FOLD_MS
 * (their events' data) mentioned everyone this one would: those people were
 * paged about this storm moments ago. A page naming someone new (an owner)
 * still posts.
 */
export function stormPageFolds(page: unknown, recent: readonly { at: Date; data: unknown }[], now: Date): boolean {
  const within = recent.filter((r) => now.getTime() - r.at.getTime() < STORM_PAGE_FOLD_MS);
  if (within.length === 0) return false;
  const paged = new Set(within.flatMap((r) => mentioned(r.data)));
  return mentioned(page).every((who) => paged.has(who));
}
