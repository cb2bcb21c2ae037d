import { parseDestination } from './events.js';
import { ownerChange } from './ownership.js';

/** The alert fields silence depends on (structurally the alerts row). */
export interface SilenceFields {
  status: string;
  silencedBy: string | null;
  silencedUntil: Date | null;
  silenceReason: string | null;
}

/**
 * Silence is stored as `silenced_by` (who) and `silenced_until` (when it ends;
 * null means "until resolved"). `silenced_by` null means not silenced.
 */
export type SilenceState = { silenced: false } | { silenced: true; until: Date | 'resolved'; by: string; reason: string | null };

/**
 * Is the alert silenced at `now`? The one rule every reader asks (held
 * notifications, unsilence, the alert card, the webhook payload, /scheduler
 * status, the digest): a silence is in force while the alert is open and its
 * time has not come; it ends when the alert resolves, and an expired one is
 * over even before the escalation clock clears its columns.
 */
export function silenceState(alert: Pick<SilenceFields, 'status' | 'silencedBy' | 'silencedUntil'> & Partial<Pick<SilenceFields, 'silenceReason'>>, now: Date): SilenceState {
  if (alert.status !== 'open' || !alert.silencedBy) return { silenced: false };
  if (alert.silencedUntil && alert.silencedUntil.getTime() <= now.getTime()) return { silenced: false };
  return { silenced: true, until: alert.silencedUntil ?? 'resolved', by: alert.silencedBy, reason: alert.silenceReason ?? null };
}

/**
 * Whether a silence asked for meets one already in force that it must not
 * replace. A button (the root's Silence select, a storm message's menu) is
 * offered only on an alert shown unsilenced, so a click that finds a silence
 * in force lost a race to another click, or was pressed on a message not yet
 * re-rendered: it changes nothing, and the clicker is told whose silence
 * holds (the silence returned). A typed command or the API names its own
 * duration and replaces the silence in force (`replace`).
 */
export function silenceInTheWay(
  alert: Pick<SilenceFields, 'status' | 'silencedBy' | 'silencedUntil'> & Partial<Pick<SilenceFields, 'silenceReason'>>,
  now: Date,
  request: { replace: boolean },
): Extract<SilenceState, { silenced: true }> | undefined {
  if (request.replace) return undefined;
  const state = silenceState(alert, now);
  return state.silenced ? state : undefined;
}

/** The silence as a payload field: its end as an ISO time, "resolved" for an until-resolved silence, null when none is in force. */
export function silencedUntilField(state: SilenceState): string | null {
  if (!state.silenced) return null;
  return state.until === 'resolved' ? 'resolved' : state.until.toISOString();
}

/** What was held while an alert was silenced, told in one event when the silence ends. */
export interface HeldSummary {
  /**
   * Held events by kind (one per event, not per destination), as a list: the
   * kinds are snake_case and event data is read through a camelCasing layer,
   * so they are values, never keys.
   */
  counts: { kind: string; count: number }[];
  escalated: boolean;
  consecutiveFailures: number;
  severity: string;
}

export function summariseHeld(heldKinds: string[], alert: { consecutiveFailures: number; severity: string }): HeldSummary {
  const byKind = new Map<string, number>();
  for (const k of heldKinds) byKind.set(k, (byKind.get(k) ?? 0) + 1);
  const counts = [...byKind].map(([kind, count]) => ({ kind, count })).sort((a, b) => a.kind.localeCompare(b.kind));
  return { counts, escalated: byKind.has('escalated'), consecutiveFailures: alert.consecutiveFailures, severity: alert.severity };
}

/** A held outbox row, with the event it tells. */
export interface HeldRow {
  id: number;
  destination: string;
  /** The event's kind, actor and data (an `owner_changed` row's take, release or reassign is read from them). */
  kind?: string;
  actor?: string | null;
  data?: unknown;
}

/**
 * Destination kinds that keep an incident's state (acknowledged, severity)
 * from the events they are sent (PagerDuty: a take is its `acknowledge`, an
 * escalation the `trigger` that raises its severity). For the others an
 * ownership change or an escalation is a reply, which the silence's summary
 * covers, and whatever they are sent later shows the alert as it is.
 */
const ACKNOWLEDGING_KINDS: readonly string[] = ['pagerduty'];

/**
 * The held rows a silence's end delivers after all instead of summarising,
 * in id order (the order they were written, and will be delivered). Only
 * while the alert is open: a silence the resolve ends pages nobody for an
 * incident that is over.
 *
 * - Its opening: a destination that has heard nothing of the alert but its
 *   held rows reached the alert's severity while it was silenced (a warning
 *   that escalated under the silence, and a critical-only pager or
 *   mailbox). The summary that ends the silence cannot be its first message
 *   (it is not an opening), so without its held opening (its first held
 *   row) it would never hear of the open critical alert, nor of its resolve.
 * - Its acknowledgement: for a destination that keeps the incident's state
 *   (PagerDuty), the last ownership change held for it, when that change is
 *   a person taking the alert. Otherwise the trigger (released, or sent
 *   before the silence) would go on paging someone for an alert a person
 *   owns. A take given back or reassigned later under the silence
 *   acknowledges nothing: the alert is not that person's now.
 * - Its severity: for such a destination that heard the alert before the
 *   silence (a warning, to a pager set to `minSeverity: warning`), the
 *   escalation held for it. Otherwise its incident would stay a warning
 *   for a critical alert: no later event of the alert raises it.
 * - Its thread after a storm: a channel's held `storm_outlived` (the storm
 *   the alert's opening was folded into ended while it was silenced). That
 *   event is what gives the alert a root of its own in that channel; summed
 *   up instead, the alert would stay in an ended storm's message with no
 *   thread anywhere, its later replies (escalation, recovery) never posted.
 */
export function heldReleases(held: readonly HeldRow[], heard: ReadonlySet<string>, alertOpen: boolean): number[] {
  if (!alertOpen) return [];
  const byDestination = new Map<string, HeldRow[]>();
  for (const row of [...held].sort((a, b) => a.id - b.id)) byDestination.set(row.destination, [...(byDestination.get(row.destination) ?? []), row]);
  const released: number[] = [];
  for (const [destination, rows] of byDestination) {
    if (!heard.has(destination)) released.push(rows[0]!.id);
    const outlived = rows.find((r) => r.kind === 'storm_outlived');
    if (outlived && !released.includes(outlived.id)) released.push(outlived.id);
    if (!ACKNOWLEDGING_KINDS.includes(parseDestination(destination).kind)) continue;
    const escalated = rows.filter((r) => r.kind === 'escalated').at(-1);
    if (escalated && !released.includes(escalated.id)) released.push(escalated.id);
    const lastChange = rows.filter((r) => r.kind === 'owner_changed').at(-1);
    if (lastChange && !released.includes(lastChange.id) && ownerChange({ actor: lastChange.actor ?? null, data: lastChange.data }) === 'take') released.push(lastChange.id);
  }
  return released.sort((a, b) => a - b);
}

/** A `silenced` or `unsilenced` alert event, as the silence history is read from (the alert's columns hold only the silence in force). */
export interface SilenceEvent {
  kind: string;
  at: Date;
  actor: string | null;
  data: unknown;
}

/** One silence of an alert: set at `from` by `by`, asked `until` (null: until resolved); `endedAt` when it ended, if it has. */
export interface SilencePeriod {
  from: Date;
  until: Date | null;
  endedAt: Date | null;
  by: string | null;
  reason: string | null;
}

/**
 * The silences of one alert that overlapped the period (since, until], from
 * its events (oldest first, none after `until`): each `silenced` event starts
 * one, which ends at the first of its own time, the next `silenced` (a
 * replacement) or `unsilenced` event (by hand, or the escalation clock seeing
 * it lapse), and the alert's resolution (`resolvedAt`). Unsilencing clears the
 * alert's silence columns, so a silence that ended during the period is only
 * found here. `endedAt` is null for one still in force at `until`.
 */
export function silencesOverlapping(events: readonly SilenceEvent[], resolvedAt: Date | null, since: Date, until: Date): SilencePeriod[] {
  const out: SilencePeriod[] = [];
  events.forEach((e, i) => {
    if (e.kind !== 'silenced' || e.at.getTime() > until.getTime()) return;
    const data = (e.data ?? {}) as { until?: unknown; reason?: unknown };
    const asked = typeof data.until === 'string' ? new Date(data.until) : null;
    const next = events.slice(i + 1).find((n) => n.kind === 'silenced' || n.kind === 'unsilenced');
    const ends = [asked, next?.at ?? null, resolvedAt].filter((d): d is Date => d !== null).map((d) => d.getTime());
    const end = ends.length ? Math.min(...ends) : Infinity;
    if (end <= since.getTime()) return;
    out.push({ from: e.at, until: asked, endedAt: end <= until.getTime() ? new Date(end) : null, by: e.actor, reason: typeof data.reason === 'string' ? data.reason : null });
  });
  return out;
}

/** Always delivered, even while the alert is silenced. */
const NEVER_HELD: readonly string[] = ['silenced', 'unsilenced', 'resolved'];

/**
 * Does a silence hold this event's messages until it ends? Everything but the
 * silence's own beginning and end, the resolution, and the daily reminder of
 * an "until resolved" silence (`reminder` with `about: 'silenced'`): that
 * reminder speaks for the silence, so holding it would hold it for ever.
 */
export function heldBySilence(kind: string, data: unknown): boolean {
  if (NEVER_HELD.includes(kind)) return false;
  return !(kind === 'reminder' && (data as { about?: unknown } | null)?.about === 'silenced');
}
