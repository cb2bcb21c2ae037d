import type { CadenceProfile } from './cadence.js';

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
  cadenceSeconds: number;
  escalateAfterFailures: number;
}

export const EFFECTIVE_POLICY_FIELDS = [
  'retries',
  'alertAfter',
  'firstSeverity',
  'escalationMultiplier',
  'recoverAfter',
  'graceSeconds',
  'timeoutSeconds',
  'minRows',
  'cadenceSeconds',
  'escalateAfterFailures',
] as const satisfies readonly (keyof EffectivePolicy)[];

export function effectivePolicy(profile: CadenceProfile): EffectivePolicy {
  return Object.fromEntries(EFFECTIVE_POLICY_FIELDS.map((f) => [f, profile[f]])) as unknown as EffectivePolicy;
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
  return EFFECTIVE_POLICY_FIELDS.filter((f) => !stored || !Object.is(stored[f] ?? null, next[f] ?? null)).map((field) => ({ field, from: stored?.[field] ?? null, to: next[field] }));
}
