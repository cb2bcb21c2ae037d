import { describe, expect, it } from 'vitest';
import { decideRight, mayBeAssigned, seesShadowAlerts, silenceAction, visibleTenants, type RightsRequest, type SlackAction } from '../../src/domain/rights.js';

const base: Omit<RightsRequest, 'action'> = { user: 'UMEMBER', userGroups: [], channelMember: true, rights: {}, globalAdmins: [] };
const decide = (action: SlackAction, over: Partial<RightsRequest> = {}) => decideRight({ ...base, action, ...over });

describe('decideRight: who may do what on a tenant', () => {
  // [case, action, overrides, expected]
  const table: [string, SlackAction, Partial<RightsRequest>, ReturnType<typeof decideRight>][] = [
    ['no admins named anywhere: a channel member may do everything', 'resolve', {}, { allowed: true, as: 'responder' }],
    ['no admins named: a channel member may release another\'s ownership', 'release_other', {}, { allowed: true, as: 'responder' }],
    ['no admins named: a non-member may not even take', 'take', { channelMember: false }, { allowed: false, needs: 'responder', ask: [] }],
    ['a global admin is admin of every tenant', 'reassign', { user: 'UBOSS', globalAdmins: ['UBOSS'], channelMember: false }, { allowed: true, as: 'admin' }],
    ['with a global admin, a member may take', 'take', { globalAdmins: ['UBOSS'] }, { allowed: true, as: 'responder' }],
    ['with a global admin, a member may release their own ownership', 'release_own', { globalAdmins: ['UBOSS'] }, { allowed: true, as: 'responder' }],
    ['with a global admin, a member may silence up to 24h', 'silence', { globalAdmins: ['UBOSS'] }, { allowed: true, as: 'responder' }],
    ['with a global admin, a member may unsilence and run now', 'run_now', { globalAdmins: ['UBOSS'] }, { allowed: true, as: 'responder' }],
    ['with a global admin, a member may not release another\'s ownership', 'release_other', { globalAdmins: ['UBOSS'] }, { allowed: false, needs: 'admin', ask: ['UBOSS'] }],
    ['with a global admin, a member may not reassign', 'reassign', { globalAdmins: ['UBOSS'] }, { allowed: false, needs: 'admin', ask: ['UBOSS'] }],
    ['with a global admin, a member may not resolve', 'resolve', { globalAdmins: ['UBOSS'] }, { allowed: false, needs: 'admin', ask: ['UBOSS'] }],
    ['with a global admin, a member may not silence for long', 'silence_long', { globalAdmins: ['UBOSS'] }, { allowed: false, needs: 'admin', ask: ['UBOSS'] }],
    ['tenant admins and global admins are both named in a refusal', 'resolve', { rights: { admins: ['ULEAD', 'SLEADS'] }, globalAdmins: ['UBOSS'] }, { allowed: false, needs: 'admin', ask: ['ULEAD', 'SLEADS', 'UBOSS'] }],
    ['a tenant admin by user id', 'resolve', { user: 'ULEAD', rights: { admins: ['ULEAD'] } }, { allowed: true, as: 'admin' }],
    ['a tenant admin through a user group', 'reassign', { userGroups: ['SLEADS'], rights: { admins: ['SLEADS'] } }, { allowed: true, as: 'admin' }],
    ['a tenant admin need not be in the channel', 'take', { channelMember: false, user: 'ULEAD', rights: { admins: ['ULEAD'] } }, { allowed: true, as: 'admin' }],
    ['named responders: a channel member who is not one may not take', 'take', { rights: { responders: ['UOPS'], admins: ['ULEAD'] } }, { allowed: false, needs: 'responder', ask: ['UOPS', 'ULEAD'] }],
    ['named responders: a listed user may take', 'take', { user: 'UOPS', rights: { responders: ['UOPS'] } }, { allowed: true, as: 'responder' }],
    ['named responders: a member of a listed group may silence', 'silence', { userGroups: ['SOPS'], rights: { responders: ['SOPS'] } }, { allowed: true, as: 'responder' }],
    ['named responders, no admins: a responder may resolve (nobody else to ask)', 'resolve', { user: 'UOPS', rights: { responders: ['UOPS'] } }, { allowed: true, as: 'responder' }],
    ['named responders, no admins: a non-responder may not resolve', 'resolve', { rights: { responders: ['UOPS'] } }, { allowed: false, needs: 'admin', ask: [] }],
    ['an empty responders list means the default (channel members)', 'take', { rights: { responders: [] } }, { allowed: true, as: 'responder' }],
  ];
  it.each(table)('%s', (_case, action, over, expected) => {
    expect(decide(action, over)).toEqual(expected);
  });
});

describe('silenceAction', () => {
  it.each([
    [3_600_000, 'silence'],
    [24 * 3_600_000, 'silence'],
    [24 * 3_600_000 + 1, 'silence_long'],
    [null, 'silence_long'],
  ] as const)('%s ms → %s', (ms, action) => expect(silenceAction(ms)).toBe(action));
});

describe('visibleTenants: what the App Home shows', () => {
  const tenants = [
    { id: 'acme', channel: 'CACME', rights: {} },
    { id: 'globex', channel: 'CGLOBEX', rights: { admins: ['SGLOBEXLEADS'] } },
    { id: 'initech', channel: null, rights: {} },
  ];
  const viewer = (over: Partial<Parameters<typeof visibleTenants>[1]> = {}) => ({ user: 'UALICE', userGroups: [], channels: new Set<string>(), platformMember: false, ...over });
  it.each([
    ['a member of one tenant channel sees that tenant only', viewer({ channels: new Set(['CACME']) }), [], ['acme']],
    ['someone in no tenant channel sees nothing', viewer(), [], []],
    ['a tenant admin (through a group) sees the tenant without being in its channel', viewer({ userGroups: ['SGLOBEXLEADS'] }), [], ['globex']],
    ['a global admin sees every tenant', viewer(), ['UALICE'], ['acme', 'globex', 'initech']],
    ['a platform channel member sees every tenant', viewer({ platformMember: true }), [], ['acme', 'globex', 'initech']],
  ] as const)('%s', (_case, v, admins, expected) => {
    expect(visibleTenants(tenants, v, admins)).toEqual(expected);
  });
});

describe('seesShadowAlerts: who sees an alert in shadow on the App Home', () => {
  it.each([
    ['a member of the platform channel (the audit destination)', { user: 'UOPS', platformMember: true }, true],
    ['a global admin', { user: 'UADMIN', platformMember: false }, true],
    ["a member of the tenant's channel only", { user: 'UALICE', platformMember: false }, false],
  ])('%s', (_name, viewer, expected) => {
    expect(seesShadowAlerts(viewer, ['UADMIN'])).toBe(expected);
  });
});

describe('mayBeAssigned: who an alert may be handed to', () => {
  it.each([
    ['a member of the channel, no responders named', {}, true],
    ["another tenant's person: not in the channel, no list naming them", { channelMember: false }, false],
    ['in the channel but responders are named and they are not', { rights: { responders: ['UBOB'] } }, false],
    ['named as a responder, not in the channel', { channelMember: false, rights: { responders: ['UMEMBER'] } }, true],
    ['in a responder user group', { channelMember: false, userGroups: ['SOPS'], rights: { responders: ['SOPS'] } }, true],
    ['a global admin, in no channel', { channelMember: false, globalAdmins: ['UMEMBER'] }, true],
  ] as const)('%s', (_name, over, expected) => {
    expect(mayBeAssigned({ ...base, ...over } as Omit<RightsRequest, 'action'>)).toBe(expected);
  });
});
