import type { AlertEvent } from '../db/schema.js';
import { formatDuration, plural, relativeTime, utcText } from '../domain/durations.js';
import type { AlertViewAlert } from './alert-view.js';
import { dependencyEventText } from './event-text/dependencies.js';

/**
 * What an alert event says, decided once from its data and the alert's
 * state. Every destination only renders this value: Slack with mrkdwn and
 * mentions, email with names, the webhook as fields, PagerDuty as a summary.
 * So a reassign reads as a reassign everywhere, and no destination can
 * disagree with another on what happened.
 *
 * Pure. Text in `value`, `strong` and `code` parts, the quote and the detail
 * is raw, possibly hostile text (names, notes, errors): each renderer escapes
 * for its own medium. `text` parts are this module's own words.
 */
export type TextPart =
  | { type: 'text'; text: string }
  /** A name or reason from outside (workflow, team, silence reason). */
  | { type: 'strong'; text: string }
  | { type: 'code'; text: string }
  | { type: 'user'; id: string }
  | { type: 'group'; id: string }
  /**
   * A point in time. `relative` is the words as of the event ("in 40 minutes",
   * "3 hours ago"); `lead` says which reads first ("escalates in 40 minutes (at …)"
   * against "until 13:05 (in 4 hours)").
   */
  | { type: 'time'; at: Date; relative?: string; lead?: 'relative' | 'absolute' }
  | { type: 'duration'; ms: number };

/** Medium-neutral icons; Slack maps them to emoji, others ignore or map them. */
export type EventIcon =
  | 'warning'
  | 'critical'
  | 'new_error'
  | 'take'
  | 'release'
  | 'reassign'
  | 'reminder'
  | 'expired'
  | 'silenced'
  | 'unsilenced'
  | 'run'
  | 'succeeded'
  | 'failed'
  | 'flapping'
  | 'resolved'
  | 'maintenance'
  | 'paused'
  | 'resumed'
  | 'info';

export interface EventText {
  /** The event kind, refined where one kind covers several things (owner_changed:take, resolved:hand). */
  what: string;
  icon: EventIcon;
  parts: TextPart[];
  /** A person's note (reassign, resolve by hand), shown as a quote. */
  quote?: string;
  /** A longer text the event carries (a run's error), shown as code. */
  detail?: string;
  /** Who this event pages; Slack mentions them in a reply broadcast to the channel. */
  mention?: { users: string[]; groups: string[] };
}

export type EventInput = Pick<AlertEvent, 'kind' | 'actor' | 'at' | 'data'>;

export interface EventTextInput {
  event: EventInput;
  alert: Pick<AlertViewAlert, 'severity' | 'consecutiveFailures' | 'openedAt' | 'resolvedAt' | 'ownerTeam' | 'ownerUser' | 'errorGroup' | 'lastError' | 'silencedUntil' | 'silencedBy' | 'silenceReason'>;
  workflow: { name: string };
}

type Data = Record<string, unknown>;
const str = (d: Data, k: string): string | undefined => (typeof d[k] === 'string' && d[k] !== '' ? (d[k] as string) : undefined);
const num = (d: Data, k: string): number | undefined => (typeof d[k] === 'number' && Number.isFinite(d[k]) ? (d[k] as number) : undefined);
const date = (d: Data, k: string): Date | undefined => {
  const v = str(d, k);
  const at = v ? new Date(v) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
};
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);

const t = (text: string): TextPart => ({ type: 'text', text });
const strong = (text: string): TextPart => ({ type: 'strong', text });
const code = (text: string): TextPart => ({ type: 'code', text });
const user = (id: string): TextPart => ({ type: 'user', id });
/** A person, or "Someone" when the row does not say who. */
const person = (id: string | null | undefined, capital = true): TextPart => (id ? user(id) : t(capital ? 'Someone' : 'someone'));
const failures = (n: number): TextPart => t(plural(n, 'consecutive failure'));

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

function heldSentence(summary: unknown): TextPart[] {
  const held = heldCounts(summary);
  if (!held.length) return [];
  const words = held.map(({ kind, count }) => {
    const [one, many] = HELD_NOUNS[kind] ?? [kind.replace(/_/g, ' '), `${kind.replace(/_/g, ' ')}s`];
    return plural(count, one, many);
  });
  return [t(` While silenced: ${words.join(', ')}.`)];
}

/** Take, release or reassign, from the row's own `action` when it has one, else from what changed. */
export function ownerChange(event: Pick<EventInput, 'actor' | 'data'>): 'take' | 'release' | 'reassign' {
  const d = (event.data ?? {}) as Data;
  const action = str(d, 'action');
  if (action === 'take' || action === 'release' || action === 'reassign') return action;
  const fromTeam = str(d, 'fromTeam');
  const toTeam = str(d, 'toTeam');
  const sameTeam = !fromTeam || !toTeam || fromTeam === toTeam;
  const fromUser = str(d, 'fromUser');
  const toUser = str(d, 'toUser');
  if (sameTeam && toUser && toUser === event.actor && fromUser !== toUser && d.note == null) return 'take';
  if (sameTeam && !toUser && fromUser && fromUser === event.actor) return 'release';
  return 'reassign';
}

/** Who an event pages (`data.mention`, set by the engine): the mention, when anyone is named, and its " Paging …." words. */
function pagingOf(d: Data): { mention?: { users: string[]; groups: string[] }; paging: TextPart[] } {
  if (!d.mention || typeof d.mention !== 'object') return { paging: [] };
  const mention = { users: strings((d.mention as Data).users), groups: strings((d.mention as Data).groups) };
  if (mention.users.length + mention.groups.length === 0) return { paging: [] };
  const who = [...mention.users.map(user), ...mention.groups.map((id): TextPart => ({ type: 'group', id }))];
  return { mention, paging: [t(' Paging '), ...joinParts(who), t('.')] };
}

function ownerParts(team: string | undefined, userId: string | undefined): TextPart[] {
  return [strong(team ?? 'engineering'), ...(userId ? [t(' ('), user(userId), t(')')] : [])];
}

function resolvedText(event: EventInput, a: EventTextInput['alert'], d: Data): EventText {
  const seconds = num(d, 'durationSeconds');
  const end = a.resolvedAt ?? event.at;
  const ms = seconds !== undefined ? seconds * 1000 : end.getTime() - a.openedAt.getTime();
  const after: TextPart = { type: 'duration', ms };
  const held = heldSentence(d.heldWhileSilenced);
  const note = str(d, 'note');
  const quote = note ? { quote: note } : {};
  switch (str(d, 'by') ?? 'run') {
    case 'hand':
      return { what: 'resolved:hand', icon: 'resolved', parts: [person(event.actor), t(' resolved the alert by hand after '), after, t('.'), ...held], ...quote };
    case 'workflow_disabled':
      return { what: 'resolved:workflow_disabled', icon: 'resolved', parts: [t('Resolved after '), after, t(' because the workflow was disabled.'), ...held], ...quote };
    case 'workflow_deleted':
      return { what: 'resolved:workflow_deleted', icon: 'resolved', parts: [t('Resolved after '), after, t(' because the workflow was deleted.'), ...held], ...quote };
    default: {
      const runId = num(d, 'runId') ?? num(d, 'resolvedByRunId');
      const successes = num(d, 'successes');
      const how = runId ? [t(`Recovered: run #${runId} succeeded${successes && successes > 1 ? ` (${successes} successes in a row)` : ''}.`)] : [t('Recovered.')];
      return { what: 'resolved:run', icon: 'resolved', parts: [...how, t(' Resolved after '), after, t('.'), ...held], ...quote };
    }
  }
}

/** The event in words, read defensively from its data (old rows may lack fields). */
export function eventText({ event, alert: a, workflow }: EventTextInput): EventText {
  const family = dependencyEventText(event, workflow);
  if (family) return family;
  const d = (event.data ?? {}) as Data;
  switch (event.kind) {
    case 'opened': {
      const severity = str(d, 'severity') === 'critical' || (!str(d, 'severity') && a.severity === 'critical') ? 'critical' : 'warning';
      const count = num(d, 'consecutiveFailures') ?? a.consecutiveFailures;
      const escalateAt = severity === 'warning' ? date(d, 'escalateAt') : undefined;
      // An alert that opens critical pages like an escalation does (data.mention: the tenant's on-call).
      const { mention, paging } = pagingOf(d);
      return {
        what: 'opened',
        icon: severity,
        parts: [
          t(`${severity === 'critical' ? 'Critical alert' : 'Alert'} opened: `),
          strong(workflow.name),
          t(' has '),
          failures(count),
          t('.'),
          ...(escalateAt ? [t(' It escalates to critical '), { type: 'time', at: escalateAt, relative: relativeTime(escalateAt, event.at), lead: 'relative' } as TextPart, t(' unless someone takes ownership.')] : []),
          ...paging,
        ],
        ...(mention ? { mention } : {}),
      };
    }
    case 'escalated': {
      const count = num(d, 'consecutiveFailures') ?? a.consecutiveFailures;
      const { mention, paging } = pagingOf(d);
      const why =
        str(d, 'reason') === 'kept_failing'
          ? [t(' after '), failures(count), t('. Nobody has taken ownership.')]
          : [t(' with '), failures(count), t('. Nobody took ownership before the deadline.')];
      const by = event.actor ? [t(' by '), user(event.actor)] : [];
      return {
        what: 'escalated',
        icon: 'critical',
        parts: [t('Escalated to '), strong('critical'), ...by, ...(event.actor ? [t(' with '), failures(count), t('.')] : why), ...paging],
        ...(mention ? { mention } : {}),
      };
    }
    case 'reminder': {
      const since = date(d, 'since');
      const when = since ? [t(' '), { type: 'time', at: since, relative: relativeTime(since, event.at), lead: 'relative' } as TextPart] : [];
      const still = [t(' The alert is still failing with '), failures(a.consecutiveFailures), t('.')];
      const owner = str(d, 'ownerUser');
      if (str(d, 'about') === 'silenced') {
        return { what: 'reminder:silenced', icon: 'reminder', parts: [t('Reminder: this alert was silenced until it resolves'), ...when, t('.'), ...still] };
      }
      return {
        what: 'reminder:owned',
        icon: 'reminder',
        parts: [t('Reminder: '), person(owner), t(' took ownership'), ...when, t('.'), ...still],
        ...(owner ? { mention: { users: [owner], groups: [] } } : {}),
      };
    }
    case 'ownership_expired': {
      const since = date(d, 'ownedSince');
      const held = since ? [t(' after '), { type: 'duration', ms: event.at.getTime() - since.getTime() } as TextPart] : [];
      return {
        what: 'ownership_expired',
        icon: 'expired',
        parts: [t('Ownership by '), person(str(d, 'previousUser'), false), t(' expired'), ...held, t('. The alert is unowned again and escalation resumes.')],
      };
    }
    case 'error_group_changed': {
      const to = str(d, 'errorGroup') ?? str(d, 'to') ?? a.errorGroup ?? '?';
      const from = str(d, 'previous') ?? str(d, 'from');
      return {
        what: 'error_group_changed',
        icon: 'new_error',
        parts: [t('A different error appeared: group '), code(to), ...(from ? [t(' (was '), code(from), t(')')] : []), t('.')],
        ...detailOf(str(d, 'error') ?? a.lastError ?? undefined),
      };
    }
    case 'owner_changed': {
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
    }
    case 'silenced': {
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
    }
    case 'unsilenced': {
      const expired = str(d, 'why') === 'expired' || !event.actor;
      const summary = d.summary ?? d;
      const severity = str(summary as Data, 'severity') ?? a.severity;
      const count = num(summary as Data, 'consecutiveFailures') ?? a.consecutiveFailures;
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
    }
    case 'run_requested':
      return { what: 'run_requested', icon: 'run', parts: [person(event.actor ?? str(d, 'by')), t(` started run #${num(d, 'runId') ?? '?'}.`)] };
    case 'run_finished': {
      const ok = str(d, 'status') === 'succeeded';
      return {
        what: `run_finished:${ok ? 'succeeded' : 'failed'}`,
        icon: ok ? 'succeeded' : 'failed',
        parts: [t(`Run #${num(d, 'runId') ?? '?'} ${ok ? 'succeeded' : str(d, 'status') === 'timed_out' ? 'timed out' : 'failed'}.`)],
        ...(ok ? {} : detailOf(str(d, 'error'))),
      };
    }
    case 'flapping': {
      const changes = num(d, 'transitions');
      const window = num(d, 'window');
      const need = num(d, 'recoverAfter');
      const seen = changes !== undefined ? `${plural(changes, 'change')} between success and failure${window ? ` in the last ${plural(window, 'run')}` : ''}` : 'it keeps changing between success and failure';
      return { what: 'flapping', icon: 'flapping', parts: [t(`Flapping: ${seen}. It will resolve after ${need ? plural(need, 'success', 'successes') : 'several successes'} in a row.`)] };
    }
    case 'resolved':
      return resolvedText(event, a, d);
    case 'maintenance_ended': {
      const start = date(d, 'startedAt');
      const end = date(d, 'endedAt') ?? event.at;
      const failed = num(d, 'failures') ?? 0;
      const missed = num(d, 'missed') ?? 0;
      const reason = str(d, 'reason');
      const inside =
        failed + missed === 0
          ? t(' Nothing failed during it.')
          : t(` During it, ${[failed ? plural(failed, 'failure') : '', missed ? plural(missed, 'missed tick') : ''].filter(Boolean).join(' and ')} ${failed + missed === 1 ? 'was' : 'were'} not held against the workflow.`);
      return {
        what: 'maintenance_ended',
        icon: 'maintenance',
        parts: [
          t(str(d, 'scope') === 'tenant' ? 'Maintenance of the whole tenant ended' : 'Maintenance ended'),
          ...(start ? [t(' after '), { type: 'duration', ms: end.getTime() - start.getTime() } as TextPart] : []),
          ...(reason ? [t(' ('), strong(reason), t(')')] : []),
          t('.'),
          inside,
        ],
      };
    }
    case 'workflow_paused':
    case 'workflow_resumed': {
      const paused = event.kind === 'workflow_paused';
      const reason = str(d, 'reason');
      return {
        what: event.kind,
        icon: paused ? 'paused' : 'resumed',
        parts: [
          person(event.actor),
          t(paused ? ' paused ' : ' resumed '),
          strong(workflow.name),
          t(paused ? '. It does not run or escalate until it is resumed.' : '. It runs and escalates again.'),
          ...(reason ? [t(` Reason: ${reason}`)] : []),
        ],
      };
    }
    case 'policy_changed': {
      const changes = Array.isArray(d.changes) ? (d.changes as { field?: unknown; from?: unknown; to?: unknown }[]).filter((c) => typeof c.field === 'string') : [];
      const from = num(d, 'from');
      const to = num(d, 'to');
      return {
        what: 'policy_changed',
        icon: 'info',
        parts: [
          t(`Policy changed${from !== undefined && to !== undefined ? ` (v${from} → v${to})` : ''}`),
          ...(changes.length ? [t(': '), ...joinParts(changes.map((c) => t(`${POLICY_FIELD_WORDS[c.field as string] ?? String(c.field)} ${String(c.from ?? 'none')} → ${String(c.to ?? 'none')}`)))] : []),
          t('. This alert continues under the new rules.'),
        ],
      };
    }
    case 'went_live':
      return { what: 'went_live', icon: 'info', parts: [t('Shadow mode ended: from now on this alert is told to its channel and destinations.')] };
    default:
      return { what: event.kind, icon: 'info', parts: [t(`${event.kind.replace(/_/g, ' ')}.`)] };
  }
}

/** The effective policy's fields in words (policy_changed). */
const POLICY_FIELD_WORDS: Record<string, string> = {
  retries: 'retries per tick',
  alertAfter: 'failures before alerting',
  firstSeverity: 'first severity',
  escalationMultiplier: 'escalation multiplier',
  recoverAfter: 'successes to resolve',
  graceSeconds: 'grace (seconds)',
  timeoutSeconds: 'timeout (seconds)',
  minRows: 'minimum rows',
  cadenceSeconds: 'cadence (seconds)',
  escalateAfterFailures: 'failures before escalating',
};

function detailOf(text: string | undefined): { detail?: string } {
  return text ? { detail: text } : {};
}

/** "a", "a and b", "a, b and c" */
function joinParts(items: TextPart[]): TextPart[] {
  return items.flatMap((p, i) => (i === 0 ? [p] : [t(i === items.length - 1 ? ' and ' : ', '), p]));
}

/**
 * The event in plain text: people by name when `nameOf` knows them (else
 * `@U…`), times in UTC with the relative words, durations in words. For
 * email, PagerDuty and the webhook's summary.
 */
export function plainEventText(text: EventText, nameOf: (userId: string) => string | undefined = () => undefined): string {
  const body = text.parts.map((p) => plainPart(p, nameOf)).join('');
  return text.quote ? `${body} Note: ${text.quote}` : body;
}

export function plainPart(p: TextPart, nameOf: (userId: string) => string | undefined = () => undefined): string {
  switch (p.type) {
    case 'text':
    case 'strong':
    case 'code':
      return p.text;
    case 'user':
      return nameOf(p.id) ?? `@${p.id}`;
    case 'group':
      return `@${p.id}`;
    case 'time':
      if (!p.relative) return utcText(p.at);
      return p.lead === 'relative' ? `${p.relative} (at ${utcText(p.at)})` : `${utcText(p.at)} (${p.relative})`;
    case 'duration':
      return formatDuration(p.ms);
  }
}

/** The parts as JSON for the webhook: times as ISO strings, durations in seconds and words. */
export function eventTextFields(text: EventText) {
  return {
    what: text.what,
    sentence: plainEventText(text),
    parts: text.parts.map((p) =>
      p.type === 'time'
        ? { type: p.type, at: p.at.toISOString(), ...(p.relative ? { relative: p.relative, lead: p.lead ?? 'absolute' } : {}) }
        : p.type === 'duration'
          ? { type: p.type, seconds: Math.round(p.ms / 1000), words: formatDuration(p.ms) }
          : p,
    ),
    note: text.quote ?? null,
    detail: text.detail ?? null,
    mention: text.mention ?? null,
  };
}
