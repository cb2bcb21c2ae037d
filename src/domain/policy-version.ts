import { profileForCadence, type CadenceProfile, type PolicyOverrides } from './cadence.js';
import type { OverlapPolicy } from './overlap.js';
import { DEFAULT_LAPSE_AFTER_REMINDERS } from './escalation.js';

/**
 * A workflow's effective policy: what every decision about it is made with
 * (cadence-derived defaults with its overrides applied). Its version changes
 * exactly when one of these values changes, whatever changed it: the
 * workflows file, the API, a new cron, or a new release of the defaults.
 */
export interface EffectivePolicy {
  retries: number;
  alertAfter: number;
  firstSeverity: 'warning' | 'critical';
  escalationMultiplier: number;
  recoverAfter: number;
  graceSeconds: number;
  timeoutSeconds: number;
  minRows: number | null;
  minDurationSeconds: number | null;
  runningLongAfterSeconds: number | null;
  completeBy: { time: string; timeZone?: string } | null;
  cadenceSeconds: number;
  escalateAfterFailures: number;
  /** A managed tick falling due while a run still runs: fired beside it or skipped (overlap.ts). */
  overlap: OverlapPolicy;
  /** How late a managed tick may still start; older ones are recorded missed (catch-up.ts). */
  catchUpSeconds: number;
  /** The owner's fixed reminder period; null: the default, doubling from the cadence (escalation.ts). */
  remindAfterSeconds: number | null;
  /** Unanswered reminders after which an ownership lapses and the on-call is told (0: never). */
  ownershipLapsesAfterReminders: number;
}

/**
 * The last four were added after versions were first recorded: a stored
 * version without them is read by `storedValues` (no version for every
 * workflow at the release that added them).
 */
export const EFFECTIVE_POLICY_FIELDS = [
  'retries',
  'alertAfter',
  'firstSeverity',
  'escalationMultiplier',
  'recoverAfter',
  'graceSeconds',
  'timeoutSeconds',
  'minRows',
  'minDurationSeconds',
  'runningLongAfterSeconds',
  'completeBy',
  'cadenceSeconds',
  'escalateAfterFailures',
  'overlap',
  'catchUpSeconds',
  'remindAfterSeconds',
  'ownershipLapsesAfterReminders',
] as const satisfies readonly (keyof EffectivePolicy)[];

/**
 * Fields that decide what a managed tick launches or records as missed,
 * never what an open alert does (its escalation, reminders, resolution): a
 * change of them is a version, but not told in an open alert's thread.
 */
export const TICK_ONLY_FIELDS: readonly PolicyChange['field'][] = ['overlap', 'catchUpSeconds'];

export function effectivePolicy(profile: CadenceProfile): EffectivePolicy {
  const { remindAfterSeconds, ownershipLapsesAfterReminders } = profile.overrides;
  return {
    ...(Object.fromEntries(EFFECTIVE_POLICY_FIELDS.filter((f) => f in profile).map((f) => [f, profile[f as keyof CadenceProfile]])) as object),
    remindAfterSeconds: remindAfterSeconds ?? null,
    ownershipLapsesAfterReminders: ownershipLapsesAfterReminders ?? DEFAULT_LAPSE_AFTER_REMINDERS,
  } as EffectivePolicy;
}

/** The changes an open alert is told of (and takes): all but those of what a tick launches. */
export function changesForOpenAlert(changes: PolicyChange[]): PolicyChange[] {
  return changes.filter((c) => !TICK_ONLY_FIELDS.includes(c.field));
}

/**
 * The rules an open alert continues under after its workflow's policy changed:
 * the new ones, except what the cadence decides about its escalation (the
 * multiplier and the failures that escalate it), which comes from the cadence
 * it captured when it opened, with the workflow's overrides applied. Editing
 * the cron mid-incident moves neither its deadline nor its failure threshold
 * (DESIGN.md core idea 6: an hourly warning whose cron became daily would
 * otherwise take the daily multiplier and escalate at once on its two
 * failures); an override of `escalationMultiplier` or `alertAfter` still does.
 */
export function policyForOpenAlert(next: EffectivePolicy, overrides: PolicyOverrides | null | undefined, capturedCadenceSeconds: number): EffectivePolicy {
  const captured = profileForCadence(capturedCadenceSeconds, overrides);
  return { ...next, escalationMultiplier: captured.escalationMultiplier, escalateAfterFailures: captured.escalateAfterFailures };
}

/**
 * The changed fields an open alert does not take (its `policy_changed` reply
 * says so): the cadence captured at opening, and what that cadence decides
 * of its escalation, with the values it keeps.
 */
export function keptByOpenAlert(changes: PolicyChange[], next: EffectivePolicy, forAlert: EffectivePolicy): { field: PolicyChange['field']; value: unknown }[] {
  return changes.filter((c) => !same(next[c.field] ?? null, forAlert[c.field] ?? null)).map((c) => ({ field: c.field, value: forAlert[c.field] ?? null }));
}

export interface PolicyChange {
  field: (typeof EFFECTIVE_POLICY_FIELDS)[number];
  from: unknown;
  to: unknown;
}

/**
 * What differs between the stored version and the policy now; every field
 * when nothing was stored yet. Empty: the same version stands (an unchanged
 * re-sync, or an override written out that equals its default).
 */
export function policyChanges(stored: Partial<Record<string, unknown>> | null, next: EffectivePolicy): PolicyChange[] {
  const was = stored ? storedValues(stored, next) : null;
  return EFFECTIVE_POLICY_FIELDS.filter((f) => !was || !same(was[f] ?? null, next[f] ?? null)).map((field) => ({ field, from: was?.[field] ?? null, to: next[field] }));
}

/**
 * A stored version's values, each field it predates (recorded by a release
 * before the field was versioned) read as what that version's own cadence
 * and overrides give it: the release that adds a field records no version
 * and tells no thread, while a value that differs from the version's own
 * overrides (an explicit change since) is a change. A version without a
 * cadence to read from (none was ever stored so) does not compare the field.
 */
function storedValues(stored: Partial<Record<string, unknown>>, next: EffectivePolicy): Partial<Record<string, unknown>> {
  const predates = EFFECTIVE_POLICY_FIELDS.filter((f) => !(f in stored));
  if (predates.length === 0) return stored;
  const cadence = stored.cadenceSeconds;
  const then = typeof cadence === 'number' && cadence > 0 ? effectivePolicy(profileForCadence(cadence, (stored.overrides ?? {}) as PolicyOverrides)) : next;
  return { ...stored, ...Object.fromEntries(predates.map((f) => [f, then[f]])) };
}

/** Values as stored in JSON: an object (completeBy) is the same when its fields are. */
function same(a: unknown, b: unknown): boolean {
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.every((k) => Object.is((a as Record<string, unknown>)[k] ?? null, (b as Record<string, unknown>)[k] ?? null));
  }
  return Object.is(a, b);
}

/** One recorded version as the replay reads it: when it took effect and the workflow's own overrides then. */
export interface RecordedVersion<O> {
  version: number;
  changedAt: Date;
  overrides: O;
}

/**
 * The version in force at `at`: the newest one recorded at or before it. A
 * workflow whose first version came later (created, or first recorded,
 * inside the period) ran under that first one from its start; none recorded
 * at all (a ledger older than versions): undefined, the caller's fallback.
 * Also the versions that took effect after `at` and by `until`: a period the
 * policy changed in, which one baseline cannot follow.
 */
export function versionInForceAt<O>(versions: readonly RecordedVersion<O>[], at: Date, until: Date): { inForce: RecordedVersion<O> | undefined; changedDuring: RecordedVersion<O>[] } {
  const sorted = [...versions].sort((a, b) => a.version - b.version);
  const before = sorted.filter((v) => v.changedAt.getTime() <= at.getTime());
  const inForce = before[before.length - 1] ?? sorted[0];
  const changedDuring = sorted.filter((v) => v !== inForce && v.changedAt.getTime() > at.getTime() && v.changedAt.getTime() <= until.getTime());
  return { inForce, changedDuring };
}
