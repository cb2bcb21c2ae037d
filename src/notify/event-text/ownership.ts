import { relativeTime } from '../../domain/durations.js';
import { ownerChange } from '../../domain/ownership.js';
import { code, date, failures, num, pagingOf, person, str, strong, t, user, type Renderer, type TextPart } from './parts.js';

/** Take, release or reassign: the rule lives in src/domain/ownership.ts (held releases need it too). */
export { ownerChange };

function ownerParts(team: string | undefined, userId: string | undefined): TextPart[] {
  return [strong(team ?? 'engineering'), ...(userId ? [t(' ('), user(userId), t(')')] : [])];
}

const ownerChanged: Renderer = ({ event, alert: a, d }) => {
  const change = ownerChange(event);
  const note = str(d, 'note');
  const quote = note ? { quote: note } : {};
  if (change === 'take') return { what: 'owner_changed:take', icon: 'take', parts: [person(str(d, 'toUser') ?? event.actor), t(' took ownership. Escalation stopped.')], ...quote };
  if (change === 'release') return { what: 'owner_changed:release', icon: 'release', parts: [person(event.actor), t(' released ownership. The alert is unowned again.')], ...quote };
  const fromTeam = str(d, 'fromTeam');
  const toTeam = str(d, 'toTeam') ?? a.ownerTeam;
  const fromUser = str(d, 'fromUser');
  const toUser = str(d, 'toUser');
  // Within one team only the person changes: name the people, and the team once.
  const parts =
    !fromTeam || fromTeam === toTeam
      ? [
          person(event.actor),
          t(' reassigned the alert '),
          ...(fromUser ? [t('from '), user(fromUser), t(' ')] : []),
          t('to '),
          ...(toUser ? [user(toUser), t(' ('), strong(toTeam), t(')')] : [t('the '), strong(toTeam), t(' team with no one named')]),
          t('.'),
        ]
      : [person(event.actor), t(' reassigned the alert from '), ...ownerParts(fromTeam, fromUser), t(' to '), ...ownerParts(toTeam, toUser), t('.')];
  return { what: 'owner_changed:reassign', icon: 'reassign', parts, ...quote };
};

const reminder: Renderer = ({ event, alert: a, workflow, d, offSlack }) => {
  const since = date(d, 'since');
  const when = since ? [t(' '), { type: 'time', at: since, relative: relativeTime(since, event.at), lead: 'relative' } as TextPart] : [];
  const still = [t(' The alert is still failing with '), failures(a.consecutiveFailures), t('.')];
  const owner = str(d, 'ownerUser');
  if (str(d, 'about') === 'silenced') {
    return { what: 'reminder:silenced', icon: 'reminder', parts: [t('Reminder: this alert was silenced until it resolves'), ...when, t('.'), ...still] };
  }
  if (str(d, 'about') === 'unowned') {
    const { mention, paging } = pagingOf(d, offSlack);
    return {
      what: 'reminder:unowned',
      icon: 'reminder',
      parts: [t('Reminder: this alert went critical'), ...when, t(' and nobody has taken ownership.'), ...still, t(' Taking it stops these reminders.'), ...paging],
      ...(mention ? { mention } : {}),
    };
  }
  return {
    what: 'reminder:owned',
    icon: 'reminder',
    parts: [t('Reminder: '), person(owner), t(' took ownership'), ...when, t('.'), ...still, ...keepIt(workflow.name, num(d, 'lapsesAfter'))],
    ...(owner ? { mention: { users: [owner], groups: [] } } : {}),
  };
};

/**
 * How the owner keeps the alert, and what happens if they do not (a reminder
 * recorded before `lapsesAfter` was: the lapse unsaid; 0: it never lapses).
 */
function keepIt(workflowName: string, lapsesAfter: number | undefined): TextPart[] {
  const how = [t(' To keep it, press Take ownership (or '), code(`/scheduler ack ${workflowName}`), t(')')];
  if (lapsesAfter === undefined) return [];
  if (lapsesAfter === 0) return [...how, t('.')];
  return [...how, t(`; after ${lapsesAfter} unanswered ${lapsesAfter === 1 ? 'reminder' : 'reminders'} it goes back to the on-call.`)];
}

/** The owner took the alert they own again: their answer to its reminders. */
const ownerConfirmed: Renderer = ({ event, d }) => ({
  what: 'owner_confirmed',
  icon: 'take',
  parts: [person(str(d, 'ownerUser') ?? event.actor), t(' is still on it. The reminders start over.')],
});

const ownershipExpired: Renderer = ({ event, alert: a, d, offSlack }) => {
  const since = date(d, 'ownedSince');
  const held = since ? [t(' after '), { type: 'duration', ms: event.at.getTime() - since.getTime() } as TextPart] : [];
  const ended = (how: string) => [t('Ownership by '), person(str(d, 'previousUser'), false), t(how), ...held];
  const reminders = typeof d.reminders === 'number' ? d.reminders : null;
  if (str(d, 'reason') === 'unanswered' && reminders !== null) {
    const { mention, paging } = pagingOf(d, offSlack);
    return {
      what: 'ownership_expired:unanswered',
      icon: 'expired',
      parts: [
        ...ended(' lapsed'),
        t(`: ${reminders} ${reminders === 1 ? 'reminder' : 'reminders'} went unanswered. The alert is unowned again`),
        // Its severity when it lapsed (data), not at delivery: a warning it left may have escalated since.
        t((str(d, 'severity') ?? a.severity) === 'critical' ? '; take it to own it.' : ' and escalation resumes; take it to own it.'),
        ...paging,
      ],
      ...(mention ? { mention } : {}),
    };
  }
  const after = d.paused === true ? '; it escalates once the workflow is resumed.' : ' and escalation resumes.';
  return { what: 'ownership_expired', icon: 'expired', parts: [...ended(' expired'), t(`. The alert is unowned again${after}`)] };
};

/** Who owns the alert: take, release, reassign, reminders to the owner, ownership lapsing. */
export const ownershipTexts = { owner_changed: ownerChanged, owner_confirmed: ownerConfirmed, reminder, ownership_expired: ownershipExpired } satisfies Record<string, Renderer>;
