import { describe, expect, it } from 'vitest';
import { onCallReach, pageTarget } from '../../src/domain/oncall-reach.js';
import { offSlackPage, pageLadder, pagePlan } from '../../src/domain/page-fallback.js';

describe('pageLadder: the rungs a page climbs', () => {
  const oncall = { group: 'SACME' };
  it("a page naming the tenant's on-call starts there; one naming anyone else names the owner first", () => {
    expect(pageLadder({ users: [], groups: ['SACME'] }, oncall, { group: 'SOPS', users: [] }).map((r) => r.step)).toEqual(['tenant_oncall', 'platform_oncall']);
    expect(pageLadder({ users: ['U0ALICE'], groups: [] }, oncall, undefined)).toEqual([
      { step: 'owner', named: { users: ['U0ALICE'] } },
      { step: 'tenant_oncall', named: { group: 'SACME', users: [] } },
      { step: 'platform_oncall', named: {} },
    ]);
  });
});

describe('pagePlan: what the page says in each channel', () => {
  const none = new Map();
  const ladder = pageLadder({ users: [], groups: ['SACME'] }, { group: 'SACME' }, { group: 'SOPS', users: [] });
  const empty = { step: 'tenant_oncall' as const, named: { group: 'SACME' }, reach: onCallReach({ group: 'SACME' }, { users: [] }, none) };
  const ops = (members: string[]) => ({ step: 'platform_oncall' as const, named: { group: 'SOPS' }, reach: onCallReach({ group: 'SOPS' }, { users: members }, none) });

  it("the platform's on-call paged: named in the platform channel, only said to have been paged in the tenant's", () => {
    const target = pageTarget([empty, ops(['U0OPS'])]);
    expect(pagePlan(target, ladder, 'platform')).toMatchObject({ kind: 'fell_back', to: 'platform_oncall', mention: { users: [], groups: ['SOPS'] } });
    expect(pagePlan(target, ladder, 'tenant')).toEqual({ kind: 'platform_paged', passed: [empty] });
  });

  it("nobody: the platform channel hears every rung, the tenant's channel its own", () => {
    const target = pageTarget([empty, ops([])]);
    expect(pagePlan(target, ladder, 'platform')).toMatchObject({ kind: 'nobody', noPlatformOnCall: false, passed: [empty, ops([])] });
    expect(pagePlan(target, ladder, 'tenant')).toEqual({ kind: 'nobody', noPlatformOnCall: false, passed: [empty] });
    const unset = pageLadder({ users: [], groups: ['SACME'] }, { group: 'SACME' }, undefined);
    expect(pagePlan(pageTarget([empty, { step: 'platform_oncall', named: {}, reach: onCallReach({}, undefined, none) }]), unset, 'platform')).toMatchObject({ kind: 'nobody', noPlatformOnCall: true });
  });

  it('the first rung reached: the page as made', () => {
    expect(pagePlan(pageTarget([ops(['U0OPS'])]), ladder, 'tenant')).toEqual({ kind: 'as_made' });
  });
});

describe('offSlackPage: a page told where Slack cannot be asked whom a name reaches', () => {
  it('names the rung the page starts at by role: the tenant’s on-call when it names exactly them, else the owner; nobody named, nothing', () => {
    expect(offSlackPage({ users: [], groups: ['S0ONCALL'] }, { group: 'S0ONCALL' })).toEqual({ startsAt: 'tenant_oncall' });
    expect(offSlackPage({ users: ['U0ALICE'], groups: [] }, { group: 'S0ONCALL' })).toEqual({ startsAt: 'owner' });
    expect(offSlackPage({ users: [], groups: [] }, { group: 'S0ONCALL' })).toBeUndefined();
  });
});
