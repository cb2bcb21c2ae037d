import type { AlertEvent } from '../../db/schema.js';
import { plural } from '../../domain/durations.js';
import type { IncidentAudience } from '../../domain/pagerduty-incident.js';
import { offSlackPage, type Named } from '../../domain/page-fallback.js';
import type { AlertViewAlert } from '../alert-view.js';

/**
 * The vocabulary of an event's text (see src/notify/event-text.ts): the parts
 * a sentence is made of, and the defensive readers of an event's data that
 * every renderer in this folder shares.
 *
 * Text in `value`, `strong` and `code` parts, the quote and the detail is raw,
 * possibly hostile text (names, notes, errors): each renderer of a medium
 * escapes it. `text` parts are this module's own words.
 */
export type TextPart =
  | { type: 'text'; text: string }
  /** A name or reason from outside (workflow, team, silence reason). */
  | { type: 'strong'; text: string }
  | { type: 'code'; text: string }
  /** `quiet`: named without a mention that would notify them (an event of an alert in shadow pings nobody). */
  | { type: 'user'; id: string; quiet?: boolean }
  | { type: 'group'; id: string; quiet?: boolean }
  /**
   * A point in time. `relative` is the words as of the event ("in 40 minutes",
   * "3 hours ago"); `lead` says which reads first ("escalates in 40 minutes (at …)"
   * against "until 13:05 (in 4 hours)"). `zone`: a time the workflow's
   * schedule names (a tick, a completion deadline), shown on that zone's
   * clock with its name, beside the reader's own.
   */
  | { type: 'time'; at: Date; relative?: string; lead?: 'relative' | 'absolute'; zone?: string }
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
  /**
   * Who reads it: the tenant's channel and destinations (the default: tenants
   * are untrusted), or the platform's (its channel, PLATFORM_DESTINATIONS),
   * which alone hear the platform's own PagerDuty keys named.
   */
  audience?: IncidentAudience;
  /** Rendered for a destination other than Slack: a page names its rung by role (`pagingOf`), with the tenant's on-call to tell which. */
  offSlack?: OffSlack;
}

export interface OffSlack {
  tenantOnCall: Named;
}

export type Data = Record<string, unknown>;

/** What a renderer of one event kind is given: the input, and the event's data as a record. */
export interface RenderInput extends EventTextInput {
  d: Data;
}

/** Renders one event kind (or a family of them) into its text. */
export type Renderer = (input: RenderInput) => EventText;

export const str = (d: Data, k: string): string | undefined => (typeof d[k] === 'string' && d[k] !== '' ? (d[k] as string) : undefined);
export const num = (d: Data, k: string): number | undefined => (typeof d[k] === 'number' && Number.isFinite(d[k]) ? (d[k] as number) : undefined);
export const date = (d: Data, k: string): Date | undefined => {
  const v = str(d, k);
  const at = v ? new Date(v) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
};
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);

export const t = (text: string): TextPart => ({ type: 'text', text });
export const strong = (text: string): TextPart => ({ type: 'strong', text });
export const code = (text: string): TextPart => ({ type: 'code', text });
export const user = (id: string): TextPart => ({ type: 'user', id });
/** A person, or "Someone" when the row does not say who. */
export const person = (id: string | null | undefined, capital = true): TextPart => (id ? user(id) : t(capital ? 'Someone' : 'someone'));
export const failures = (n: number): TextPart => t(plural(n, 'consecutive failure'));

/** "a", "a and b", "a, b and c" */
export function joinParts(items: TextPart[]): TextPart[] {
  return items.flatMap((p, i) => (i === 0 ? [p] : [t(i === items.length - 1 ? ' and ' : ', '), p]));
}

export function detailOf(text: string | undefined): { detail?: string } {
  return text ? { detail: text } : {};
}

/**
 * Who an event pages (`data.mention`, set by the engine): the mention, when anyone is named, and its
 * " Paging …." words. Off Slack (`offSlack`: email, webhook, PagerDuty, which cannot ask Slack who a
 * name reaches) the words name the rung by role (src/domain/page-fallback.ts `offSlackPage`).
 */
export function pagingOf(d: Data, offSlack?: OffSlack): { mention?: { users: string[]; groups: string[] }; paging: TextPart[] } {
  if (!d.mention || typeof d.mention !== 'object') return { paging: [] };
  const mention = { users: strings((d.mention as Data).users), groups: strings((d.mention as Data).groups) };
  if (mention.users.length + mention.groups.length === 0) return { paging: [] };
  const page = offSlack && offSlackPage(mention, offSlack.tenantOnCall);
  if (page) {
    const rung = page.startsAt === 'owner' ? "the alert's owner" : "the tenant's on-call";
    return { mention, paging: [t(` Paging ${rung} in Slack; if Slack finds they reach nobody, the thread there says who is paged instead.`)] };
  }
  const who = [...mention.users.map(user), ...mention.groups.map((id): TextPart => ({ type: 'group', id }))];
  return { mention, paging: [t(' Paging '), ...joinParts(who), t('.')] };
}
