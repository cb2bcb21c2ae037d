import { describe, expect, it } from 'vitest';
import { heldBySilence, heldReleases, silencedUntilField, silenceInTheWay, silencesOverlapping, silenceState, summariseHeld, type SilenceFields } from '../../src/domain/silence.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const H = 3_600_000;
const later = new Date(NOW.getTime() + H);
const earlier = new Date(NOW.getTime() - H);

describe('silenceState: is the alert silenced now', () => {
  const silenced: SilenceFields = { status: 'open', silencedBy: 'U0BOB', silencedUntil: later, silenceReason: 'vendor outage' };
  it.each([
    ['open, silenced until later: in force', {}, { silenced: true, until: later, by: 'U0BOB', reason: 'vendor outage' }],
    ['open, silenced until resolved: in force', { silencedUntil: null }, { silenced: true, until: 'resolved', by: 'U0BOB', reason: 'vendor outage' }],
    ['open, the silence ended an hour ago (not yet cleared): over', { silencedUntil: earlier }, { silenced: false }],
    ['open, the silence ends exactly now: over', { silencedUntil: NOW }, { silenced: false }],
    ['open, never silenced: not silenced', { silencedBy: null, silencedUntil: null }, { silenced: false }],
    ['resolved while silenced until later: over (resolving ends it)', { status: 'resolved' }, { silenced: false }],
    ['resolved while silenced until resolved: over', { status: 'resolved', silencedUntil: null }, { silenced: false }],
    ['no reason given: in force, reason null', { silenceReason: null }, { silenced: true, until: later, by: 'U0BOB', reason: null }],
  ] as const)('%s', (_case, over, expected) => {
    expect(silenceState({ ...silenced, ...over } as SilenceFields, NOW)).toEqual(expected);
  });
});

describe('silenceInTheWay: a click does not replace a silence in force', () => {
  const silenced: SilenceFields = { status: 'open', silencedBy: 'U0BOB', silencedUntil: later, silenceReason: null };
  it.each([
    ['a click on an alert silenced until later: in the way', {}, false, { silenced: true, until: later, by: 'U0BOB', reason: null }],
    ['a click on an alert silenced until resolved: in the way', { silencedUntil: null }, false, { silenced: true, until: 'resolved', by: 'U0BOB', reason: null }],
    ['a click on an alert whose silence has run out: free', { silencedUntil: earlier }, false, undefined],
    ['a click on an alert never silenced: free', { silencedBy: null, silencedUntil: null }, false, undefined],
    ['a command replaces a silence in force', {}, true, undefined],
  ] as const)('%s', (_case, over, replace, expected) => {
    expect(silenceInTheWay({ ...silenced, ...over } as SilenceFields, NOW, { replace })).toEqual(expected);
  });
});

describe('silencedUntilField: the silence as a payload field', () => {
  it.each([
    ['a timed silence: its end', { silenced: true, until: later, by: 'U', reason: null }, later.toISOString()],
    ['until resolved', { silenced: true, until: 'resolved', by: 'U', reason: null }, 'resolved'],
    ['none in force', { silenced: false }, null],
  ] as const)('%s', (_case, state, expected) => expect(silencedUntilField(state)).toBe(expected));
});

describe('summariseHeld: what a silence held, told once', () => {
  it('counts held events by kind in name order and says whether one was an escalation', () => {
    const summary = summariseHeld(['failure_recorded', 'escalated', 'failure_recorded'], { consecutiveFailures: 5, severity: 'critical' });
    expect(summary).toEqual({ counts: [{ kind: 'escalated', count: 1 }, { kind: 'failure_recorded', count: 2 }], escalated: true, consecutiveFailures: 5, severity: 'critical' });
    expect(summariseHeld([], { consecutiveFailures: 2, severity: 'warning' }).escalated).toBe(false);
  });
});

describe('heldReleases: what a silence’s end delivers after all', () => {
  const held = [
    { id: 7, destination: 'slack:CACME' },
    { id: 8, destination: 'pagerduty:abc' },
    { id: 9, destination: 'email:boss@example.com' },
    { id: 12, destination: 'pagerduty:abc' },
    { id: 13, destination: 'email:boss@example.com' },
  ];
  it.each([
    ['open, only the channel heard the opening: each other destination’s first held row', new Set(['slack:CACME']), true, [8, 9]],
    ['open, every destination heard it before the silence: nothing', new Set(['slack:CACME', 'pagerduty:abc', 'email:boss@example.com']), true, []],
    ['resolved: nothing, whoever heard what', new Set(['slack:CACME']), false, []],
  ] as const)('%s', (_name, heard, open, expected) => {
    expect(heldReleases(held, heard, open)).toEqual(expected);
  });
});

describe('heldReleases: a storm that ended under the silence still gives the alert its thread', () => {
  const held = [
    { id: 20, destination: 'slack:CACME', kind: 'failure_recorded' },
    { id: 21, destination: 'slack:CACME', kind: 'storm_outlived' },
    { id: 22, destination: 'slack:CACME', kind: 'escalated' },
  ];
  it('open: the channel’s storm_outlived, though the channel heard the opening (in the storm message)', () => {
    expect(heldReleases(held, new Set(['slack:CACME']), true)).toEqual([21]);
  });
  it('resolved under the silence: nothing (the ended storm’s message shows it resolved)', () => {
    expect(heldReleases(held, new Set(['slack:CACME']), false)).toEqual([]);
  });
});

describe('heldReleases: a pager’s acknowledgement is not lost with the held replies', () => {
  const take = { kind: 'owner_changed', actor: 'U0ALICE', data: { fromTeam: 'engineering', toTeam: 'engineering', toUser: 'U0ALICE' } };
  const release = { kind: 'owner_changed', actor: 'U0ALICE', data: { fromUser: 'U0ALICE', action: 'release' } };
  const reassign = { kind: 'owner_changed', actor: 'U0ALICE', data: { fromUser: 'U0ALICE', toUser: 'U0BOB', action: 'reassign' } };
  const escalated = { kind: 'escalated', actor: null, data: {} };

  it('escalated and taken under the silence: the pager gets its opening, then the take', () => {
    const held = [
      { id: 3, destination: 'pagerduty:abc', ...escalated },
      { id: 4, destination: 'slack:CACME', ...take },
      { id: 5, destination: 'pagerduty:abc', ...take },
      { id: 6, destination: 'email:boss@example.com', ...take },
    ];
    // The channel and the mailbox heard the alert: their take is a reply the summary covers.
    expect(heldReleases(held, new Set(['slack:CACME', 'email:boss@example.com']), true)).toEqual([3, 5]);
  });

  it('paged before the silence, taken during it: the take', () => {
    expect(heldReleases([{ id: 9, destination: 'pagerduty:abc', ...take }], new Set(['pagerduty:abc']), true)).toEqual([9]);
  });

  it.each([
    ['taken, then released', [take, release]],
    ['taken, then reassigned (a reassignment is no acknowledgement)', [take, reassign]],
  ] as const)('%s under the silence: nothing', (_name, changes) => {
    const held = changes.map((c, i) => ({ id: 10 + i, destination: 'pagerduty:abc', ...c }));
    expect(heldReleases(held, new Set(['pagerduty:abc']), true)).toEqual([]);
  });

  it('a silence the resolve ends: nothing, acknowledgement or not', () => {
    expect(heldReleases([{ id: 9, destination: 'pagerduty:abc', ...take }], new Set(['pagerduty:abc']), false)).toEqual([]);
  });
});

describe('heldReleases: a pager that heard the warning learns it escalated', () => {
  const escalated = { kind: 'escalated', actor: null, data: {} };
  const failure = { kind: 'failure_recorded', actor: null, data: {} };

  it('paged at warning before the silence, escalated under it: the escalation (its trigger carries critical)', () => {
    const held = [
      { id: 30, destination: 'pagerduty:abc', ...failure },
      { id: 31, destination: 'slack:CACME', ...escalated },
      { id: 32, destination: 'pagerduty:abc', ...escalated },
      { id: 33, destination: 'email:boss@example.com', ...escalated },
    ];
    // The channel and a mailbox that heard the warning: the summary says it escalated.
    expect(heldReleases(held, new Set(['pagerduty:abc', 'slack:CACME', 'email:boss@example.com']), true)).toEqual([32]);
  });

  it('escalated and taken under the silence: the escalation, then the take, in the order they were written', () => {
    const take = { kind: 'owner_changed', actor: 'U0ALICE', data: { fromTeam: 'engineering', toTeam: 'engineering', toUser: 'U0ALICE' } };
    const held = [
      { id: 40, destination: 'pagerduty:abc', ...take },
      { id: 41, destination: 'pagerduty:abc', ...escalated },
    ];
    expect(heldReleases(held, new Set(['pagerduty:abc']), true)).toEqual([40, 41]);
  });

  it('a silence the resolve ends: nothing', () => {
    expect(heldReleases([{ id: 32, destination: 'pagerduty:abc', ...escalated }], new Set(['pagerduty:abc']), false)).toEqual([]);
  });
});

describe('silencesOverlapping', () => {
  const t = (h: number) => new Date(NOW.getTime() + h * H);
  const silenced = (h: number, until: number | null, reason = 'r') => ({ kind: 'silenced', at: t(h), actor: 'U0A', data: { until: until === null ? null : t(until).toISOString(), reason } });
  const unsilenced = (h: number) => ({ kind: 'unsilenced', at: t(h), actor: 'U0A', data: {} });

  it('ends a silence at its time, the next silence or unsilence, or the resolution, whichever comes first', () => {
    expect(silencesOverlapping([silenced(1, 3), unsilenced(2)], null, t(0), t(10)).map((p) => p.endedAt)).toEqual([t(2)]);
    expect(silencesOverlapping([silenced(1, 3)], null, t(0), t(10)).map((p) => p.endedAt)).toEqual([t(3)]);
    expect(silencesOverlapping([silenced(1, null), silenced(2, 5)], null, t(0), t(10)).map((p) => [p.from, p.endedAt])).toEqual([[t(1), t(2)], [t(2), t(5)]]);
    expect(silencesOverlapping([silenced(1, null)], t(4), t(0), t(10)).map((p) => p.endedAt)).toEqual([t(4)]);
  });

  it('keeps only those that overlapped the period; one still in force at its end has no end', () => {
    expect(silencesOverlapping([silenced(1, 2)], null, t(2), t(10))).toEqual([]);
    expect(silencesOverlapping([silenced(1, 20)], null, t(2), t(10))).toEqual([{ from: t(1), until: t(20), endedAt: null, by: 'U0A', reason: 'r' }]);
    expect(silencesOverlapping([silenced(1, null)], t(30), t(2), t(10))[0]!.endedAt).toBeNull();
  });
});

describe('heldBySilence: what a silence keeps back until it ends', () => {
  it.each([
    ['a failure count', 'escalated', {}, true],
    ['an owner reminder', 'reminder', { about: 'owned' }, true],
    ['the on-call paged again', 'reminder', { about: 'unowned' }, true],
    ["an until-resolved silence's own daily reminder (held, it was never delivered)", 'reminder', { about: 'silenced' }, false],
    ['the silence itself', 'silenced', {}, false],
    ['its end', 'unsilenced', {}, false],
    ['the recovery', 'resolved', {}, false],
  ] as const)('%s', (_case, kind, data, held) => {
    expect(heldBySilence(kind, data)).toBe(held);
  });
});
