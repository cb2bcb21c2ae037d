import { describe, expect, it } from 'vitest';
import { countsTowardSharedCause, DEFAULT_SHARED_CAUSE_RULE, DEFAULT_STORM_RULE, isSharedCause, sharedCauseWindow, stormDecision, stormEnds, stormPageFolds } from '../../src/domain/storm.js';

const now = new Date('2026-03-10T02:01:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);

describe('stormDecision (default: 5 openings within 2 minutes)', () => {
  it.each([
    { name: 'one opening, no storm', openingsInWindow: 1, storm: null, want: 'root' },
    { name: 'four openings: still roots', openingsInWindow: 4, storm: null, want: 'root' },
    { name: 'the fifth opening starts a storm', openingsInWindow: 5, storm: null, want: 'start' },
    { name: 'fifty at once: one storm', openingsInWindow: 50, storm: null, want: 'start' },
    { name: 'a storm that grew a minute ago takes in a lone opening', openingsInWindow: 1, storm: { lastJoinedAt: ago(60) }, want: 'join' },
    { name: 'at exactly the window, still growing', openingsInWindow: 1, storm: { lastJoinedAt: ago(120) }, want: 'join' },
    { name: 'a storm that stopped growing: a lone opening posts its own root', openingsInWindow: 1, storm: { lastJoinedAt: ago(121) }, want: 'root' },
    { name: 'a new burst while an old storm is open joins it (one storm per channel)', openingsInWindow: 6, storm: { lastJoinedAt: ago(3600) }, want: 'join' },
  ] as const)('$name', ({ openingsInWindow, storm, want }) => {
    expect(stormDecision({ openingsInWindow, storm, now, rule: DEFAULT_STORM_RULE }).kind).toBe(want);
  });

  it('minAlerts 0 turns storms off', () => {
    expect(stormDecision({ openingsInWindow: 500, storm: null, now, rule: { minAlerts: 0, windowSeconds: 120 } }).kind).toBe('root');
  });

  it('a configured rule: 3 within 10 minutes', () => {
    const rule = { minAlerts: 3, windowSeconds: 600 };
    expect(stormDecision({ openingsInWindow: 3, storm: null, now, rule }).kind).toBe('start');
    expect(stormDecision({ openingsInWindow: 1, storm: { lastJoinedAt: ago(540) }, now, rule }).kind).toBe('join');
  });
});

describe('stormEnds', () => {
  it.each([
    { name: 'still growing: never ends', lastJoinedAt: ago(30), openMembers: 0, want: false },
    { name: 'stopped growing, every alert resolved', lastJoinedAt: ago(600), openMembers: 0, want: true },
    { name: 'stopped growing, four still open (fewer than a storm): ends, four own threads', lastJoinedAt: ago(600), openMembers: 4, want: true },
    { name: 'stopped growing, five still open: still a storm', lastJoinedAt: ago(600), openMembers: 5, want: false },
    { name: 'fifty open for a day: one message all along', lastJoinedAt: ago(86_400), openMembers: 50, want: false },
  ] as const)('$name', ({ lastJoinedAt, openMembers, want }) => {
    expect(stormEnds({ lastJoinedAt, openMembers, now, rule: DEFAULT_STORM_RULE })).toBe(want);
  });
});

describe('shared cause (default: one error group in 3 workflows within an hour)', () => {
  it.each([
    { workflows: 1, want: false },
    { workflows: 2, want: false },
    { workflows: 3, want: true },
    { workflows: 40, want: true },
  ])('$workflows workflows → $want', ({ workflows, want }) => {
    expect(isSharedCause(workflows, DEFAULT_SHARED_CAUSE_RULE)).toBe(want);
  });

  it('minWorkflows 0 turns it off', () => {
    expect(isSharedCause(100, { minWorkflows: 0, windowSeconds: 60 })).toBe(false);
  });

  it('the window is aligned, so every replica claims the same one', () => {
    const a = sharedCauseWindow(new Date('2026-03-10T02:01:00Z'), DEFAULT_SHARED_CAUSE_RULE);
    const b = sharedCauseWindow(new Date('2026-03-10T02:59:59Z'), DEFAULT_SHARED_CAUSE_RULE);
    expect(a.start).toEqual(new Date('2026-03-10T02:00:00Z'));
    expect(b.start).toEqual(a.start);
    expect(a.since).toEqual(new Date('2026-03-10T01:01:00Z'));
  });
});

describe('countsTowardSharedCause', () => {
  it('leaves out an alert whose workflow or tenant is in shadow now', () => {
    expect(countsTowardSharedCause({ workflowShadow: false, tenantShadow: false })).toBe(true);
    expect(countsTowardSharedCause({ workflowShadow: true, tenantShadow: false })).toBe(false);
    expect(countsTowardSharedCause({ workflowShadow: false, tenantShadow: true })).toBe(false);
  });
});

describe('stormPageFolds: a storm pages the same people once, not once per member', () => {
  const now = new Date('2026-03-10T01:01:00Z');
  const ago = (min: number) => new Date(now.getTime() - min * 60_000);
  const oncall = { mention: { users: ['UONCALL'], groups: ['SONCALL'] } };
  it.each([
    ['no page in the thread yet: it posts', oncall, [], false],
    ['the on-call paged a minute ago: folded', oncall, [{ at: ago(1), data: oncall }], true],
    ['paged 29 minutes ago: folded', oncall, [{ at: ago(29), data: oncall }], true],
    ['paged 30 minutes ago: it posts again', oncall, [{ at: ago(30), data: oncall }], false],
    ['a page naming someone new (an owner): it posts', { mention: { users: ['UALICE'], groups: [] } }, [{ at: ago(1), data: oncall }], false],
    ['a page of nobody after a page: folded', { mention: { users: [], groups: [] } }, [{ at: ago(1), data: oncall }], true],
    ['the on-call paged across two pages: folded', oncall, [{ at: ago(1), data: { mention: { users: ['UONCALL'], groups: [] } } }, { at: ago(2), data: { mention: { users: [], groups: ['SONCALL'] } } }], true],
  ] as const)('%s', (_case, page, recent, folds) => {
    expect(stormPageFolds(page, recent, now)).toBe(folds);
  });
});
