import { describe, expect, it } from 'vitest';
import { defaultRemindAfterMs, endedPauses, escalateAtAfterPause, escalationDue, escalationDueAt, escalationMention, lapseAfterReminders, nextReminderAfterMs, ownershipExpired, reminderDue, type EscalationFields, type ReminderFields } from '../../src/domain/escalation.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const H = 3_600_000;

describe('escalationDue: when an unowned warning becomes critical, and why', () => {
  const warning: EscalationFields = { status: 'open', severity: 'warning', acknowledgedAt: null, escalateAt: new Date(NOW.getTime() + H), consecutiveFailures: 3, policy: { escalateAfterFailures: 6 } };
  it.each([
    ['not yet: below the threshold, before the deadline', {}, { due: false }],
    ['kept failing: the snapshotted threshold is reached', { consecutiveFailures: 6 }, { due: true, reason: 'kept_failing' }],
    ['deadline: escalate_at has passed', { escalateAt: NOW }, { due: true, reason: 'deadline' }],
    ['both: kept failing is the reason given', { escalateAt: ago(1), consecutiveFailures: 9 }, { due: true, reason: 'kept_failing' }],
    ['owned (acknowledged): never', { acknowledgedAt: ago(H), escalateAt: ago(1), consecutiveFailures: 9 }, { due: false }],
    ['already critical: never', { severity: 'critical', escalateAt: ago(1) }, { due: false }],
    ['resolved: never', { status: 'resolved', escalateAt: ago(1) }, { due: false }],
    ['no threshold in an old snapshot, no deadline: never', { policy: {}, escalateAt: null, consecutiveFailures: 100 }, { due: false }],
    ['resumed with 9 counted while paused, none since: not kept failing', { consecutiveFailures: 9, failuresAtResume: 9 }, { due: false }],
    ['resumed with 9, a failure since: kept failing', { consecutiveFailures: 10, failuresAtResume: 9 }, { due: true, reason: 'kept_failing' }],
    ['resumed with 9, none since, past the moved deadline: the deadline', { consecutiveFailures: 9, failuresAtResume: 9, escalateAt: ago(1) }, { due: true, reason: 'deadline' }],
    ['resumed with 2, below the threshold: the threshold as ever', { consecutiveFailures: 6, failuresAtResume: 2 }, { due: true, reason: 'kept_failing' }],
    // An every-minute managed job after three hours of the bot's downtime: 180 ticks recorded missed at once.
    ['opened on 180 ticks missed before it: not kept failing', { consecutiveFailures: 180, openedAt: ago(60_000), newestFailure: { tick: ago(80_000), status: 'missed' } }, { due: false }],
    ['the same, past its deadline: the deadline', { consecutiveFailures: 180, openedAt: ago(60_000), newestFailure: { tick: ago(80_000), status: 'missed' }, escalateAt: ago(1) }, { due: true, reason: 'deadline' }],
    ['the same, a tick after the opening missed too: kept failing', { consecutiveFailures: 181, openedAt: ago(60_000), newestFailure: { tick: ago(1_000), status: 'missed' } }, { due: true, reason: 'kept_failing' }],
    ['the same, the late run of the latest tick failed: kept failing', { consecutiveFailures: 180, openedAt: ago(60_000), newestFailure: { tick: ago(80_000), status: 'failed' } }, { due: true, reason: 'kept_failing' }],
    ['opened on 3, failed on to 6: kept failing as ever', { consecutiveFailures: 6, openedAt: ago(3 * H), newestFailure: { tick: ago(H), status: 'failed' } }, { due: true, reason: 'kept_failing' }],
  ] as const)('%s', (_case, over, expected) => {
    expect(escalationDue({ ...warning, ...over } as EscalationFields, NOW)).toEqual(expected);
  });
});

describe('escalationDueAt: when escalationDue first says yes, for a driver deciding when to look', () => {
  const deadline = new Date(NOW.getTime() + H);
  const warning: EscalationFields = { status: 'open', severity: 'warning', acknowledgedAt: null, escalateAt: deadline, consecutiveFailures: 3, policy: { escalateAfterFailures: 6 } };
  it.each([
    ['below the threshold: at its deadline', {}, deadline],
    ['kept failing: now', { consecutiveFailures: 6 }, NOW],
    ['a missed streak known at the opening: at its deadline', { consecutiveFailures: 180, openedAt: ago(60_000), newestFailure: { tick: ago(80_000), status: 'missed' } }, deadline],
    ['no deadline, below the threshold: never', { escalateAt: null }, null],
    ['owned: never', { acknowledgedAt: NOW }, null],
    ['critical: never', { severity: 'critical' }, null],
    ['resolved: never', { status: 'resolved', consecutiveFailures: 9 }, null],
  ] as const)('%s', (_case, over, expected) => {
    const alert = { ...warning, ...over } as EscalationFields;
    expect(escalationDueAt(alert, NOW)).toEqual(expected);
    // The two agree: due at that instant, not a millisecond before.
    if (expected) {
      expect(escalationDue(alert, expected).due).toBe(true);
      if (expected !== NOW) expect(escalationDue(alert, new Date(expected.getTime() - 1)).due).toBe(false);
    }
  });
});

describe('escalationMention: who is paged', () => {
  it('the owner when there is one, else the tenant on-call group and users, else nobody', () => {
    expect(escalationMention('UOWNER', { group: 'SONCALL', users: ['UPAGER'] })).toEqual({ users: ['UOWNER'], groups: [] });
    expect(escalationMention(null, { group: 'SONCALL', users: ['UPAGER'] })).toEqual({ users: ['UPAGER'], groups: ['SONCALL'] });
    expect(escalationMention(null, {})).toEqual({ users: [], groups: [] });
  });
});

describe('reminderDue: owned alerts remind once per period; until-resolved silences once a day', () => {
  const owned: ReminderFields = { status: 'open', ownerUser: 'UOWNER', acknowledgedAt: ago(H), silencedBy: null, silencedUntil: null, remindedAt: null, cadenceSeconds: 300, policy: {} };
  it.each([
    ['5-minute job owned 1h ago: due (default 30 minutes)', {}, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(H) }],
    ['owned 20 minutes ago: not yet', { acknowledgedAt: ago(20 * 60_000) }, { due: false }],
    ['reminded 10 minutes ago: not again yet', { remindedAt: ago(10 * 60_000) }, { due: false }],
    ['reminded 31 minutes ago: due again', { remindedAt: ago(31 * 60_000) }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(H) }],
    ['the workflow override (2h) wins over the cadence', { policy: { overrides: { remindAfterSeconds: 7200 } } }, { due: false }],
    ['daily job owned 1h ago: not yet (a day)', { cadenceSeconds: 86_400 }, { due: false }],
    ['unowned: no reminder', { ownerUser: null, acknowledgedAt: null }, { due: false }],
    ['resolved: no reminder', { status: 'resolved' }, { due: false }],
    ['silenced for a time: no reminder', { silencedBy: 'UX', silencedUntil: new Date(NOW.getTime() + H) }, { due: false }],
    ['silenced until resolved a day ago: due', { silencedBy: 'UX', remindedAt: ago(24 * H) }, { due: true, about: 'silenced', since: ago(24 * H) }],
    ['silenced until resolved 23h ago: not yet', { silencedBy: 'UX', remindedAt: ago(23 * H) }, { due: false }],
    ['the workflow is paused: no reminder, however long ago', { workflowPaused: true, acknowledgedAt: ago(30 * H) }, { due: false }],
    ['paused, silenced until resolved a day ago: no reminder either', { workflowPaused: true, silencedBy: 'UX', remindedAt: ago(24 * H) }, { due: false }],
    ['owned 8h ago, reminded 2h ago (after 6h): not yet, the next waits 6h', { acknowledgedAt: ago(8 * H), remindedAt: ago(2 * H) }, { due: false }],
    ['owned 12h ago, reminded 6h ago (after 6h): due', { acknowledgedAt: ago(12 * H), remindedAt: ago(6 * H) }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(12 * H) }],
    ['a fixed remindAfterSeconds does not stretch', { acknowledgedAt: ago(12 * H), remindedAt: ago(2 * H), policy: { overrides: { remindAfterSeconds: 7200 } } }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(12 * H) }],
    ['two reminders unanswered: a third one', { unansweredReminders: 2 }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(H) }],
    ['three unanswered (the default): the ownership lapses instead', { unansweredReminders: 3 }, { due: true, about: 'lapsed', ownerUser: 'UOWNER', since: ago(H), reminders: 3 }],
    ['three unanswered, but not due yet: nothing', { unansweredReminders: 3, remindedAt: ago(10 * 60_000) }, { due: false }],
    ['the workflow says 5: a fourth reminder', { unansweredReminders: 3, policy: { overrides: { ownershipLapsesAfterReminders: 5 } } }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(H) }],
    ['the workflow says 0: never lapses, however many', { unansweredReminders: 40, policy: { overrides: { ownershipLapsesAfterReminders: 0 } } }, { due: true, about: 'owned', ownerUser: 'UOWNER', since: ago(H) }],
    ['silenced until resolved: the silence reminder, no lapse', { unansweredReminders: 9, silencedBy: 'UX', remindedAt: ago(24 * H) }, { due: true, about: 'silenced', since: ago(24 * H) }],
    ['paused: no lapse either', { unansweredReminders: 9, workflowPaused: true }, { due: false }],
  ] as const)('%s', (_case, over, expected) => {
    expect(reminderDue({ ...owned, ...over } as ReminderFields, NOW)).toEqual(expected);
  });

  describe('a critical alert nobody owns pages its on-call again', () => {
    const unowned: ReminderFields = { ...owned, ownerUser: null, acknowledgedAt: null, severity: 'critical', openedAt: ago(3 * H), escalatedAt: ago(H), lastFailureAt: ago(1) };
    it.each([
      ['unowned warning: its own escalation pages, no reminder', { severity: 'warning', escalatedAt: null }, { due: false }],
      ['escalated 1h ago, never reminded: due (30 minutes for a 5-minute job)', {}, { due: true, about: 'unowned', since: ago(H) }],
      ['escalated 20 minutes ago: not yet', { escalatedAt: ago(20 * 60_000) }, { due: false }],
      ['opened critical 2 days ago (a nightly job), reminded 23h ago: not yet', { cadenceSeconds: 86_400, openedAt: ago(48 * H), escalatedAt: null, remindedAt: ago(23 * H) }, { due: false }],
      ['opened critical 2 days ago (a nightly job), reminded a day ago: due', { cadenceSeconds: 86_400, openedAt: ago(48 * H), escalatedAt: null, remindedAt: ago(24 * H) }, { due: true, about: 'unowned', since: ago(48 * H) }],
      ['no failure since the escalation: no news, no page (a monthly job fails once)', { lastFailureAt: ago(H) }, { due: false }],
      ['reminded 40 minutes ago, no failure since: nothing', { remindedAt: ago(40 * 60_000), lastFailureAt: ago(50 * 60_000) }, { due: false }],
      ['silenced: the silence speaks for it', { silencedBy: 'UX', silencedUntil: new Date(NOW.getTime() + H) }, { due: false }],
      ['paused: nobody', { workflowPaused: true }, { due: false }],
      ['resolved: nobody', { status: 'resolved' }, { due: false }],
    ] as const)('%s', (_case, over, expected) => {
      expect(reminderDue({ ...unowned, ...over } as ReminderFields, NOW)).toEqual(expected);
    });

    it('a 5-minute job escalated at 00:30 and left unowned for 3 days pages eight times, backing off to once a day', () => {
      const escalatedAt = new Date('2026-03-10T00:30:00Z');
      let alert: ReminderFields = { ...unowned, openedAt: new Date('2026-03-10T00:10:00Z'), escalatedAt, remindedAt: null };
      const at: string[] = [];
      for (let t = escalatedAt.getTime(); t <= escalatedAt.getTime() + 72 * H; t += 60_000) {
        // The job fails every 5 minutes all along.
        alert = { ...alert, lastFailureAt: new Date(t - 60_000) };
        if (reminderDue(alert, new Date(t)).due) {
          at.push(new Date(t).toISOString().slice(8, 16));
          alert = { ...alert, remindedAt: new Date(t) };
        }
      }
      expect(at).toEqual(['10T01:00', '10T01:30', '10T02:30', '10T04:30', '10T08:30', '10T16:30', '11T08:30', '12T08:30']);
    });
  });

  it('the default period follows the cadence within 30 minutes and a day', () => {
    expect([60, 300, 3600, 86_400, 7 * 86_400].map((s) => defaultRemindAfterMs(s) / 60_000)).toEqual([30, 30, 120, 1440, 1440]);
  });

  it('a 5-minute job owned at 17:00 and failing all night reminds six times by 09:00, each gap as long as the ownership had lasted', () => {
    const ownedAt = new Date('2026-03-10T17:00:00Z');
    let alert: ReminderFields = { ...owned, acknowledgedAt: ownedAt, remindedAt: null };
    const at: string[] = [];
    // The escalation clock looks every minute.
    for (let t = ownedAt.getTime(); t <= ownedAt.getTime() + 16 * H; t += 60_000) {
      if (reminderDue(alert, new Date(t)).due) {
        at.push(new Date(t).toISOString().slice(11, 16));
        alert = { ...alert, remindedAt: new Date(t) };
      }
    }
    expect(at).toEqual(['17:30', '18:00', '19:00', '21:00', '01:00', '09:00']);
  });

  it('the stretched gap never passes a day', () => {
    const base = { cadenceSeconds: 300, policy: {}, acknowledgedAt: ago(10 * 24 * H) };
    expect(nextReminderAfterMs({ ...base, remindedAt: null })).toBe(30 * 60_000);
    expect(nextReminderAfterMs({ ...base, remindedAt: ago(H) })).toBe(24 * H);
    // An until-resolved silence set before the ownership left remindedAt behind it: the first period.
    expect(nextReminderAfterMs({ ...base, acknowledgedAt: ago(H), remindedAt: ago(2 * H) })).toBe(30 * 60_000);
  });
});

describe('ownershipExpired', () => {
  const a = { status: 'open', ownerUser: 'UOWNER', acknowledgedAt: ago(8 * H) };
  it.each([
    ['no expiry configured', a, null, false],
    ['8h ownership, 8h expiry', a, 8 * 3600, true],
    ['8h ownership, 9h expiry', a, 9 * 3600, false],
    ['unowned', { ...a, ownerUser: null, acknowledgedAt: null }, 3600, false],
  ] as const)('%s', (_case, alert, seconds, expected) => expect(ownershipExpired(alert, seconds, NOW)).toBe(expected));
});

describe('escalateAtAfterPause: the deadline when the workflow resumes', () => {
  const deadline = new Date(NOW.getTime() + H);
  it.each([
    ['opened before the pause: moved by the whole pause', { severity: 'warning', escalateAt: deadline, openedAt: ago(5 * H) }, ago(2 * H), new Date(deadline.getTime() + 2 * H)],
    ['opened during the pause: moved by the pause since it opened', { severity: 'warning', escalateAt: deadline, openedAt: ago(H / 2) }, ago(2 * H), new Date(deadline.getTime() + H / 2)],
    ['a critical: unchanged', { severity: 'critical', escalateAt: deadline, openedAt: ago(5 * H) }, ago(2 * H), deadline],
    ['no deadline: none', { severity: 'warning', escalateAt: null, openedAt: ago(5 * H) }, ago(2 * H), null],
    ['no pause time known: unchanged', { severity: 'warning', escalateAt: deadline, openedAt: ago(5 * H) }, null, deadline],
  ] as const)('%s', (_name, alert, pausedAt, expected) => {
    expect(escalateAtAfterPause(alert, pausedAt, NOW)).toEqual(expected);
  });

  it('a maintenance window already told moves it by the pause less what the window held of it', () => {
    const alert = { severity: 'warning', escalateAt: deadline, openedAt: ago(5 * H) };
    const window = { startsAt: ago(3 * H), endsAt: ago(H) };
    expect(escalateAtAfterPause(alert, ago(2 * H), NOW, [window])).toEqual(new Date(deadline.getTime() + H));
    expect(escalateAtAfterPause(alert, ago(2 * H), NOW, [{ startsAt: ago(4 * H), endsAt: NOW }])).toEqual(deadline);
  });
});

describe('endedPauses: what a window told after them need not move again', () => {
  const opened = ago(10 * H);
  const e = (kind: string, at: Date) => ({ kind, at });
  it.each([
    ['none', [], []],
    ['paused and resumed', [e('workflow_paused', ago(4 * H)), e('workflow_resumed', ago(3 * H))], [{ startsAt: ago(4 * H), endsAt: ago(3 * H) }]],
    ['resumed with no pause told: paused since before the alert opened', [e('workflow_resumed', ago(3 * H))], [{ startsAt: opened, endsAt: ago(3 * H) }]],
    ['a pause still going is not one', [e('workflow_paused', ago(4 * H)), e('workflow_resumed', ago(3 * H)), e('workflow_paused', ago(H))], [{ startsAt: ago(4 * H), endsAt: ago(3 * H) }]],
  ] as const)('%s', (_name, events, spans) => {
    expect(endedPauses(events, opened)).toEqual(spans);
  });
});

describe('reminder rules: the alert\'s own, which a policy change while open replaces', () => {
  it('a top-level value (opened with, or changed since) wins over the overrides captured at opening; null is the default', () => {
    const base = { cadenceSeconds: 300, acknowledgedAt: new Date('2026-03-10T00:00:00Z'), remindedAt: null };
    expect(nextReminderAfterMs({ ...base, policy: { remindAfterSeconds: 600, overrides: { remindAfterSeconds: 7200 } } })).toBe(600_000);
    expect(nextReminderAfterMs({ ...base, policy: { remindAfterSeconds: null, overrides: { remindAfterSeconds: 7200 } } })).toBe(30 * 60_000);
    expect(nextReminderAfterMs({ ...base, policy: { overrides: { remindAfterSeconds: 7200 } } })).toBe(7_200_000);
    expect(lapseAfterReminders({ ownershipLapsesAfterReminders: 0, overrides: { ownershipLapsesAfterReminders: 5 } })).toBe(0);
    expect(lapseAfterReminders({ overrides: { ownershipLapsesAfterReminders: 5 } })).toBe(5);
    expect(lapseAfterReminders({})).toBe(3);
  });
});
