import { describe, expect, it } from 'vitest';
import { onCallReach, pageTarget, type PageRung } from '../../src/domain/oncall-reach.js';
import { unfitAccount } from '../../src/domain/rights.js';

describe('unfitAccount', () => {
  it('a deactivated account or a bot cannot be handed an alert; an unknown account is not refused for it', () => {
    expect(unfitAccount({ deleted: true, bot: false })).toBe('deactivated');
    expect(unfitAccount({ deleted: false, bot: true })).toBe('bot');
    expect(unfitAccount({ deleted: false, bot: false })).toBeUndefined();
    expect(unfitAccount(undefined)).toBeUndefined();
  });
});

describe('onCallReach', () => {
  const none = new Map();
  it('a group with members reaches someone', () => {
    expect(onCallReach({ group: 'SON' }, { users: ['U1'] }, none)).toEqual({ notes: [], reachesNobody: false });
  });
  it('an empty or gone group alone reaches nobody', () => {
    expect(onCallReach({ group: 'SON' }, { users: [] }, none)).toEqual({ notes: [{ kind: 'group_empty', group: 'SON' }], reachesNobody: true });
    expect(onCallReach({ group: 'SON' }, { error: 'no_such_subteam' }, none)).toEqual({ notes: [{ kind: 'group_gone', group: 'SON' }], reachesNobody: true });
  });
  it('a lookup that failed is not known to reach nobody', () => {
    expect(onCallReach({ group: 'SON' }, { error: 'ratelimited' }, none)).toEqual({ notes: [{ kind: 'group_unchecked', group: 'SON', error: 'ratelimited' }], reachesNobody: false });
  });
  it('users: deactivated and bots reach nobody; one person is enough; an unknown account counts as reached', () => {
    const accounts = new Map([
      ['U1', { deleted: true, bot: false }],
      ['U2', { deleted: false, bot: true }],
    ]);
    expect(onCallReach({ users: ['U1', 'U2'] }, undefined, accounts).reachesNobody).toBe(true);
    expect(onCallReach({ users: ['U1', 'U2', 'U3'] }, undefined, accounts).reachesNobody).toBe(false);
  });
  it('nobody named is not this rule (the command says nobody is named)', () => {
    expect(onCallReach({}, undefined, none)).toEqual({ notes: [], reachesNobody: false });
  });
});

describe('pageTarget: a page falls back when its names reach nobody', () => {
  const none = new Map();
  const deactivated = new Map([['U0ALICE', { deleted: true, bot: false }]]);
  const owner = (reach = onCallReach({ users: ['U0ALICE'] }, undefined, none)): PageRung => ({ step: 'owner', named: { users: ['U0ALICE'] }, reach });
  const tenant = (group: { users: string[] } | { error: string }): PageRung => ({ step: 'tenant_oncall', named: { group: 'SACME' }, reach: onCallReach({ group: 'SACME' }, group, none) });
  const platform: PageRung = { step: 'platform_oncall', named: { group: 'SOPS' }, reach: onCallReach({ group: 'SOPS' }, { users: ['U0OPS'] }, none) };
  const noPlatform: PageRung = { step: 'platform_oncall', named: {}, reach: onCallReach({}, undefined, none) };
  const step = (t: ReturnType<typeof pageTarget>) => (t.kind === 'page' ? t.rung.step : 'nobody');
  const passed = (t: ReturnType<typeof pageTarget>) => t.passed.map((r) => [r.step, r.reach.notes.map((n) => n.kind)]);

  it.each([
    ['a reachable owner is paged', [owner(), tenant({ users: ['U1'] }), platform], 'owner', []],
    ['an owner deactivated: the tenant’s on-call', [owner(onCallReach({ users: ['U0ALICE'] }, undefined, deactivated)), tenant({ users: ['U1'] }), platform], 'tenant_oncall', [['owner', ['user_unfit']]]],
    ['no owner, the on-call group empty: the platform’s on-call', [tenant({ users: [] }), platform], 'platform_oncall', [['tenant_oncall', ['group_empty']]]],
    ['the on-call group deleted: the platform’s on-call', [tenant({ error: 'no_such_subteam' }), platform], 'platform_oncall', [['tenant_oncall', ['group_gone']]]],
    ['a lookup that failed is paged, not passed over (a rate limit never pages the operator)', [tenant({ error: 'ratelimited' }), platform], 'tenant_oncall', []],
    ['everyone reaching nobody, no platform on-call: nobody, with why', [tenant({ users: [] }), noPlatform], 'nobody', [['tenant_oncall', ['group_empty']]]],
  ] as const)('%s', (_name, rungs, expected, skipped) => {
    const target = pageTarget(rungs as readonly PageRung[]);
    expect(step(target)).toBe(expected);
    expect(passed(target)).toEqual(skipped);
  });
});
