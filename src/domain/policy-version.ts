import { profileForCadence, type CadenceProfile, type PolicyOverrides } from './cadence.js';

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
}

/**
 * `overlap` is left out: it decides what a tick launches, never what a
 * failure means (src/domain/overlap.ts). `catchUpSeconds` is left out for
 * now (src/domain/catch-up.ts): it decides which ticks a scheduler that was
 * down records missed, but a field added here is a version for every
 * workflow at the release that adds it, told in every open alert's thread.
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
] as const satisfies readonly (keyof EffectivePolicy)[];

export function effectivePolicy(profile: CadenceProfile): EffectivePolicy {
  return Object.fromEntries(EFFECTIVE_POLICY_FIELDS.map((f) => [f, profile[f]])) as unknown as EffectivePolicy;
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
  return EFFECTIVE_POLICY_FIELDS.filter((f) => !stored || !same(stored[f] ?? null, next[f] ?? null)).map((field) => ({ field, from: stored?.[field] ?? null, to: next[field] }));
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
