import { describe, expect, it } from 'vitest';
import { onCallReach } from '../../src/domain/oncall-reach.js';
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
