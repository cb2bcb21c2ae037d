import { describe, expect, it } from 'vitest';
import { versionInForceAt } from '../../src/domain/policy-version.js';

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
