import { describe, expect, it } from 'vitest';
import { profileForCadence, type PolicyOverrides } from '../../src/domain/cadence.js';
import { policySchema } from '../../src/config/workflows-file.js';
import { changesForOpenAlert, EFFECTIVE_POLICY_FIELDS, effectivePolicy, policyChanges, versionInForceAt } from '../../src/domain/policy-version.js';

const at = (iso: string) => new Date(iso);
const v = (version: number, changedAt: string, alertAfter: number) => ({ version, changedAt: at(changedAt), overrides: { alertAfter } });

describe('versionInForceAt (the replay baseline)', () => {
  const versions = [v(2, '2026-03-05T12:00:00Z', 5), v(1, '2026-02-01T00:00:00Z', 2), v(3, '2026-03-20T00:00:00Z', 9)];
  const since = at('2026-03-02T00:00:00Z');
  const until = at('2026-03-09T00:00:00Z');

  it('is the newest version recorded at or before the start, not the current one', () => {
    const r = versionInForceAt(versions, since, until);
    expect(r.inForce?.version).toBe(1);
    expect(r.inForce?.overrides).toEqual({ alertAfter: 2 });
  });

  it('names the versions that took effect inside the period, not those after it', () => {
    expect(versionInForceAt(versions, since, until).changedDuring.map((x) => x.version)).toEqual([2]);
    expect(versionInForceAt(versions, at('2026-03-05T12:00:00Z'), until).inForce?.version).toBe(2);
    expect(versionInForceAt(versions, at('2026-03-05T12:00:00Z'), until).changedDuring).toEqual([]);
  });

  it('a workflow first recorded inside the period ran under its first version; none recorded: undefined', () => {
    expect(versionInForceAt(versions, at('2026-01-01T00:00:00Z'), at('2026-01-08T00:00:00Z')).inForce?.version).toBe(1);
    expect(versionInForceAt([], since, until)).toEqual({ inForce: undefined, changedDuring: [] });
  });
});

describe('policyChanges: fields a stored version predates (the release that versioned overlap, catch-up and reminders)', () => {
  const LATER = ['overlap', 'catchUpSeconds', 'remindAfterSeconds', 'ownershipLapsesAfterReminders'];
  const hourly = (overrides: PolicyOverrides) => effectivePolicy(profileForCadence(3600, overrides));
  /** A version as a release before those fields stored it: the effective policy without them, and the overrides. */
  const storedBefore = (overrides: PolicyOverrides): Record<string, unknown> => ({ ...Object.fromEntries(Object.entries(hourly(overrides)).filter(([k]) => !LATER.includes(k))), overrides });

  it('reads them as what the version\'s own cadence and overrides give: no change at the upgrade, defaults or overrides', () => {
    expect(policyChanges(storedBefore({}), hourly({}))).toEqual([]);
    const own = { catchUpSeconds: 900, overlap: 'skip', remindAfterSeconds: 600, ownershipLapsesAfterReminders: 0 } as const;
    expect(policyChanges(storedBefore(own), hourly(own))).toEqual([]);
  });

  it('a value other than the version\'s own is a change, from what it gave', () => {
    expect(policyChanges(storedBefore({}), hourly({ catchUpSeconds: 900 }))).toEqual([{ field: 'catchUpSeconds', from: 1800, to: 900 }]);
    expect(policyChanges(storedBefore({ remindAfterSeconds: 600 }), hourly({}))).toEqual([{ field: 'remindAfterSeconds', from: 600, to: null }]);
  });

  it('once stored, compared like any field; a stored version with no cadence to read from does not compare them', () => {
    expect(policyChanges({ ...hourly({}), overrides: {} }, hourly({ overlap: 'skip' }))).toEqual([{ field: 'overlap', from: 'allow', to: 'skip' }]);
    const { cadenceSeconds: _c, ...noCadence } = storedBefore({});
    expect(policyChanges(noCadence, hourly({ overlap: 'skip' }))).toEqual([]);
  });

  it('an open alert is not told of what a tick launches', () => {
    const changes = policyChanges(storedBefore({}), hourly({ catchUpSeconds: 900, overlap: 'skip', recoverAfter: 2 }));
    expect(changesForOpenAlert(changes).map((c) => c.field)).toEqual(['recoverAfter']);
  });
});

describe('EFFECTIVE_POLICY_FIELDS', () => {
  it('holds every field a workflow\'s policy may set: a new one is versioned, or this names it', () => {
    const unversioned = Object.keys(policySchema.shape).filter((f) => !(EFFECTIVE_POLICY_FIELDS as readonly string[]).includes(f));
    expect(unversioned).toEqual([]);
  });
});
