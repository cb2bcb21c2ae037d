/**
 * The alert events the engine records (one `alert_events` row each) and that
 * notifiers render. The notifier knows nothing about why an event happened:
 * it gets the alert's current state plus one of these.
 */
export const NOTIFIED_EVENT_KINDS = [
  'opened',
  'escalated',
  'error_group_changed',
  'owner_changed',
  'silenced',
  'unsilenced',
  'run_requested',
  'run_finished',
  'flapping',
  'policy_changed',
  'went_live',
  'resolved',
  // issue 13, maintenance and pause: data per the shared contract in the brief
  // (maintenance_ended: { startedAt, endedAt, reason?, failures, missed, scope }; paused/resumed: { reason? }).
  'maintenance_ended',
  'workflow_paused',
  'workflow_resumed',
  /** An owned alert still failing, or an "until resolved" silence, reminds (data: about, ownerUser?, since). */
  'reminder',
  /**
   * An ownership lapsed (the tenant's ownershipExpiresAfter, or unanswered reminders): unowned again, escalation resumes
   * (data: previousUser, ownedSince; reason, reminders, severity, mention on reminders). A warning already due to escalate
   * records no such event: its `escalated` event carries the lapse (data.lapsed), one message.
   */
  'ownership_expired',
  /**
   * The owner pressed Take ownership (or `/scheduler ack`) on an alert they already own: an answer to
   * its reminders; the unanswered count and the reminder period start over (data: ownerUser, reminders).
   */
  'owner_confirmed',
  // issue 16, run duration (src/domain/run-duration.ts); each is also an opening's `cause` when no alert was open.
  /** A run still going past its normal duration (data: runId, startedAt, runningSeconds, afterSeconds, normal?: { medianSeconds, samples }). */
  'running_long',
  /** No success for a tick by its completeBy deadline (data: tick, deadline, runId?, running). */
  'completion_missed',
  /** A success faster than minDurationSeconds, counted as a failure in an open alert (data: runId, error). */
  'too_fast',
  // issue 16, dependencies (docs/alerts.md):
  /** On the upstream alert: the downstream workflows held back by it, the whole list each time one is added (data: upstreamAlertId, affected[], otherTenants). */
  'upstream_affected',
  /** On a downstream alert opening after its upstream's incident resolved (data: upstreamAlertId, upstreamWorkflow | upstreamOtherTenant, upstreamResolvedAt). */
  'outlived_upstream',
  /** On a downstream alert already open when its upstream's alert opens: it stays, linked (data: upstreamAlertId, upstreamWorkflow | upstreamOtherTenant). */
  'upstream_broke',
  // issue 16, storms: told in one channel only (data: stormId, startedAt, alerts) and on the platform channel only (shared_cause).
  /** Still open when its channel's storm ended: the alert gets a thread of its own there. */
  'storm_outlived',
  /** One error group failing several workflows (of any tenants): operator-only, never shown to a tenant. */
  'shared_cause',
] as const;
export type NotifiedEventKind = (typeof NOTIFIED_EVENT_KINDS)[number];

/**
 * Recorded for the audit trail; Slack re-renders the root for it (the count in
 * the header) without posting a reply; other destinations ignore it.
 */
export const QUIET_EVENT_KINDS = ['failure_recorded', 'healthy_streak'] as const;
export type QuietEventKind = (typeof QUIET_EVENT_KINDS)[number];

export type AlertEventKind = NotifiedEventKind | QuietEventKind;

export function isNotifiedKind(kind: string): kind is NotifiedEventKind {
  return (NOTIFIED_EVENT_KINDS as readonly string[]).includes(kind);
}

/**
 * An event of an alert in shadow, as recorded: it pages nobody (docs/policies.md, shadow mode). Whom it
 * would have paged stays in the record as `wouldMention` (the API's timeline shows it), never as a
 * mention the audit channel's message would carry; `shadow: true` keeps its reply in the thread.
 */
export function shadowEventData(data: Record<string, unknown>): Record<string, unknown> {
  const { mention, ...rest } = data;
  return { ...rest, shadow: true, ...(mention ? { wouldMention: mention } : {}) };
}

/**
 * Whether an event was recorded for an alert in shadow (`shadowEventData`): it pages nobody, and its words
 * ping nobody either (people are named, never mentioned, but for the one who acted, who is there).
 */
export function isShadowEvent(data: unknown): boolean {
  return (data as { shadow?: unknown } | null)?.shadow === true;
}

/**
 * The events that page someone, so chat posts them as a reply broadcast to
 * the channel (DESIGN: "opening a critical or escalating to critical mentions
 * the owner or the on-call group, in a reply broadcast to the channel"): an
 * escalation to critical, and an alert that opens critical with someone to
 * page (its event carries `data.mention`), and an ownership of a critical
 * alert lapsing on unanswered reminders (nothing else would page the on-call
 * again). Inside a storm too. Never an
 * event of a shadow alert (`data.shadow`).
 */
export function pagesSomeone(event: { kind: string; data: unknown }): boolean {
  if (isShadowEvent(event.data)) return false;
  if (event.kind === 'escalated') return true;
  const mention = (event.data as { mention?: { users?: unknown[]; groups?: unknown[] } } | null)?.mention;
  return (event.kind === 'opened' || event.kind === 'ownership_expired') && !!mention && (mention.users?.length ?? 0) + (mention.groups?.length ?? 0) > 0;
}

/**
 * One outbox row per (alert, event, destination); the key is what makes a send
 * idempotent across retries, replicas and unknown outcomes.
 */
export function notificationKey(alertId: number, eventId: number, destination: string): string {
  return `alert:${alertId}:event:${eventId}:${destination}`;
}

/**
 * The key of the second message of a row that posts its alert's root and then
 * a reply of its own under it (a page, or outliving a storm): marked, so that
 * the two messages are told apart when an unknown outcome is looked up, and
 * no key stands on two messages.
 */
export function ownReplyKey(key: string): string {
  return `${key}${OWN_REPLY_SUFFIX}`;
}

const OWN_REPLY_SUFFIX = '#reply';

/** The outbox row key a message key belongs to: itself, or the row whose own reply it is. */
export function rowKeyOf(messageKey: string): string {
  return messageKey.endsWith(OWN_REPLY_SUFFIX) ? messageKey.slice(0, -OWN_REPLY_SUFFIX.length) : messageKey;
}

/** `slack:C0123` → { kind: 'slack', target: 'C0123' } */
export function parseDestination(destination: string): { kind: string; target: string } {
  const i = destination.indexOf(':');
  return i < 0 ? { kind: destination, target: '' } : { kind: destination.slice(0, i), target: destination.slice(i + 1) };
}

/** Kinds only the operator sees (they name other tenants' workflows): left out of every tenant-facing read. */
export const OPERATOR_ONLY_EVENT_KINDS: readonly string[] = ['shared_cause'];
