import { plural, relativeTime } from '../../domain/durations.js';
import { date, failures, num, person, str, strong, t, user, type Data, type Renderer, type TextPart } from './parts.js';

/** The kinds a silence held, as people say them ("4 failures recorded, 1 escalation"). */
const HELD_NOUNS: Record<string, [string, string]> = {
  failure_recorded: ['failure recorded', 'failures recorded'],
  healthy_streak: ['successful run', 'successful runs'],
  escalated: ['escalation', 'escalations'],
  error_group_changed: ['new error', 'new errors'],
  flapping: ['flapping note', 'flapping notes'],
  run_requested: ['run requested', 'runs requested'],
  run_finished: ['run finished', 'runs finished'],
  owner_changed: ['owner change', 'owner changes'],
  reminder: ['reminder', 'reminders'],
  opened: ['alert opened', 'alerts opened'],
};

/** Old rows carried counts as an object, newer ones as a list of { kind, count }. */
export function heldCounts(summary: unknown): { kind: string; count: number }[] {
  const counts = (summary as Data | null | undefined)?.counts;
  const list = Array.isArray(counts)
    ? counts.filter((c): c is { kind: string; count: number } => typeof c?.kind === 'string' && typeof c?.count === 'number')
    : counts && typeof counts === 'object'
      ? Object.entries(counts as Data).flatMap(([kind, count]) => (typeof count === 'number' ? [{ kind, count }] : []))
      : [];
  return list.filter((c) => c.count > 0);
}

/** " While silenced: 4 failures recorded, 1 escalation." or nothing. */
export function heldSentence(summary: unknown): TextPart[] {
  const held = heldCounts(summary);
  if (!held.length) return [];
  const words = held.map(({ kind, count }) => {
    const [one, many] = HELD_NOUNS[kind] ?? [kind.replace(/_/g, ' '), `${kind.replace(/_/g, ' ')}s`];
    return plural(count, one, many);
  });
  return [t(` While silenced: ${words.join(', ')}.`)];
}

const silenced: Renderer = ({ event, alert: a, d }) => {
  const until = date(d, 'until') ?? (d.until === undefined ? (a.silencedUntil ?? undefined) : undefined);
  const reason = str(d, 'reason') ?? a.silenceReason ?? undefined;
  return {
    what: 'silenced',
    icon: 'silenced',
    parts: [
      person(event.actor ?? a.silencedBy),
      t(' silenced the alert '),
      ...(until ? [t('until '), { type: 'time', at: until, relative: relativeTime(until, event.at), lead: 'absolute' } as TextPart] : [t('until it resolves')]),
      t('.'),
      ...(reason ? [t(` Reason: ${reason}`)] : []),
    ],
  };
};

const unsilenced: Renderer = ({ event, alert: a, d }) => {
  const expired = str(d, 'why') === 'expired' || !event.actor;
  const summary = (d.summary ?? d) as Data;
  const severity = str(summary, 'severity') ?? a.severity;
  const count = num(summary, 'consecutiveFailures') ?? a.consecutiveFailures;
  return {
    what: 'unsilenced',
    icon: 'unsilenced',
    parts: [
      ...(expired ? [t('The silence ended.')] : [user(event.actor!), t(' unsilenced the alert.')]),
      ...heldSentence(summary),
      t(' It is now '),
      strong(severity),
      t(' with '),
      failures(count),
      t('.'),
    ],
  };
};

/** A silence beginning and ending. */
export const silenceTexts = { silenced, unsilenced } satisfies Record<string, Renderer>;
