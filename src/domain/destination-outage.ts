/**
 * A destination that keeps failing for reasons that may go away (5xx,
 * timeouts, resets, an unreachable SMTP server) is held as a whole, not row
 * by row: every row for it waits behind one back-off, so when it recovers
 * the rows go out in the order they were written, and none is ever given up
 * on because the outage lasted long. Only a permanent answer makes a row dead.
 *
 * Pure: the caller loads the outage (if any), passes `now`, and saves the result.
 */

export interface OutagePolicy {
  /** First hold after a failure; doubles per consecutive failure. */
  baseBackoffMs: number;
  /** The cap: a failing destination is tried at least this often, forever. */
  maxBackoffMs: number;
  /** Failing for longer than this raises one notice on the platform side. */
  noticeAfterMs: number;
}

export const DEFAULT_OUTAGE_POLICY: OutagePolicy = { baseBackoffMs: 1000, maxBackoffMs: 10 * 60_000, noticeAfterMs: 15 * 60_000 };

/**
 * Why a destination is held. `unreachable`: it did not answer, or answered
 * that it is in trouble (5xx, timeouts, resets). `credentials`: it refused
 * the bot's credentials (a revoked, expired or invalid Slack token, a
 * webhook's or PagerDuty's 401/403). That is a state of the destination, not
 * of the message: nothing the row holds is wrong, and the operator's fix (a
 * new token, a restart, the token re-enabled) must find every message still
 * waiting, in order. So it is held like an outage, never made dead.
 */
export type OutageCause = 'unreachable' | 'credentials';

/**
 * A credential outage is told at once (the first refusal: nothing will get
 * through until someone acts), and probed at a back-off that stays within
 * five minutes of the fix.
 */
export const CREDENTIAL_OUTAGE_POLICY: OutagePolicy = { baseBackoffMs: 15_000, maxBackoffMs: 5 * 60_000, noticeAfterMs: 0 };

/**
 * The key a credential refusal holds. Every Slack channel is reached with the
 * one bot token, so a token Slack refuses holds the whole workspace
 * (`slack:*`): every Slack row waits, not only the one that met the refusal.
 * Webhooks and PagerDuty authenticate per destination (a URL's secret, a
 * routing key), and email per destination's SMTP conversation: the
 * destination itself. The claim honours a `<kind>:*` row for every
 * destination of that kind, and such a row is released only by a probe of
 * the credentials (Slack's `auth.test`), never by its back-off running out,
 * so the channels' heads do not all try the dead token at once.
 */
export function credentialScope(destination: string): string {
  return destination.startsWith('slack:') ? WORKSPACE_SCOPE.slack : destination;
}

/** The kinds whose destinations share one credential, and the outage key that holds them all. */
export const WORKSPACE_SCOPE = { slack: 'slack:*' } as const;

export interface Outage {
  failingSince: Date;
  /** Consecutive failed attempts since the destination last accepted something. */
  failures: number;
  heldUntil: Date;
  lastError: string;
  /** When the platform was told about this outage; null while it has not been. */
  noticedAt: Date | null;
  cause: OutageCause;
}

export function backoffMs(failures: number, policy: Pick<OutagePolicy, 'baseBackoffMs' | 'maxBackoffMs'>): number {
  return Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** Math.max(0, failures - 1));
}

/**
 * One more failure of `cause`: the new outage state, and whether this is the
 * moment to raise the notice. A destination already held as unreachable
 * whose credentials are now refused (or the other way) starts a new outage:
 * its own back-off, and its own notice.
 */
export function recordFailure(
  previous: Outage | undefined,
  error: string,
  now: Date,
  policy: OutagePolicy,
  cause: OutageCause = 'unreachable',
): { outage: Outage; raiseNotice: boolean } {
  const same = previous && previous.cause === cause ? previous : undefined;
  // Rows already in flight when the credentials were first refused are refused too: nothing new, so the probe's back-off does not grow for them.
  if (same && cause === 'credentials' && same.heldUntil.getTime() > now.getTime()) return { outage: { ...same, lastError: error }, raiseNotice: false };
  const failingSince = same?.failingSince ?? now;
  const failures = (same?.failures ?? 0) + 1;
  const heldUntil = new Date(now.getTime() + backoffMs(failures, policy));
  const raiseNotice = !same?.noticedAt && now.getTime() - failingSince.getTime() >= policy.noticeAfterMs;
  return { outage: { failingSince, failures, heldUntil, lastError: error, noticedAt: same?.noticedAt ?? (raiseNotice ? now : null), cause }, raiseNotice };
}

/**
 * How an outage ends, and what the platform is told. The outage is about the
 * destination being unreachable (5xx, timeouts, resets), so any answer that
 * is not one of those ends it, and its row is removed: the gauge drops, and
 * the next outage starts from the first back-off and raises its own notice.
 *
 * - `delivered`: the destination accepted a message. A noticed outage is
 *   announced `recovered`.
 * - `refused`: it answered, but permanently (a 404 or 410, a 4xx, a Slack
 *   error retrying will not change, or it is no longer configured). It is
 *   not unreachable any more, yet "recovered" would mislead: a noticed
 *   outage is announced `refused`, with that answer, so the platform knows
 *   the held notifications are going dead rather than out. Not held any
 *   longer, the rest are each tried at once and get their own verdict.
 *
 * An outage nobody was told of ends quietly (the log line only).
 */
export function outageEndNotice(ended: Outage | undefined, how: 'delivered' | 'refused'): 'recovered' | 'refused' | undefined {
  if (!ended?.noticedAt) return undefined;
  // Refused credentials are over once anything but a refusal of them comes back (a channel gone is the channel's matter, not the token's).
  if (ended.cause === 'credentials') return 'recovered';
  return how === 'delivered' ? 'recovered' : 'refused';
}

/** A destination refusing for good is told to the platform once, then again after this long if it still refuses. */
export const REFUSAL_NOTICE_EVERY_MS = 24 * 3_600_000;

/** Is a refusal told now? The first one (never told), then again once REFUSAL_NOTICE_EVERY_MS has passed since the last notice. */
export function refusalNoticeDue(lastNoticedAt: Date | undefined, now: Date): boolean {
  return !lastNoticedAt || now.getTime() - lastNoticedAt.getTime() >= REFUSAL_NOTICE_EVERY_MS;
}

/**
 * What the operator can do about a destination refusing for good, by its
 * answer: the Slack errors that mean the channel, not the message, is the
 * problem, and a webhook's URL gone. Undefined: the answer says it all.
 */
export function refusalAdvice(destination: string, error: string): string | undefined {
  const kind = destination.split(':')[0];
  if (kind === 'slack') {
    if (/\bnot_in_channel\b/.test(error)) return 'The bot is not in that channel: invite it there (`/invite @scheduler`).';
    if (/\bis_archived\b/.test(error)) return 'That channel is archived: unarchive it, or give the tenant another channel in the workflows file.';
    if (/\bchannel_not_found\b/.test(error)) return 'No such channel for the bot: check the channel id in the workflows file (a private channel needs the bot invited).';
  }
  if (kind === 'webhook' && /\b(404|410)\b/.test(error)) return "The receiver's URL no longer exists: fix the destination's url.";
  return undefined;
}

/** A webhook id written before migration 0019: `webhook:<URL>`. */
const LEGACY_WEBHOOK_ID = /^https?:\/\//i;

/**
 * A destination as it may be shown, logged or posted. A webhook's id is
 * `webhook:<host>/<digest>` (src/config/destination-schema.ts), shown as it
 * is; one written before migration 0019 by an older replica is its URL,
 * which can carry a token, so only its host is kept. The others' ids hold
 * nothing secret (a channel, addresses, a digest of the routing key).
 */
export function shownDestination(destination: string): string {
  if (!destination.startsWith('webhook:')) return destination;
  const target = destination.slice('webhook:'.length);
  if (!LEGACY_WEBHOOK_ID.test(target)) return destination;
  try {
    return `webhook:${new URL(target).host}`;
  } catch {
    return 'webhook';
  }
}

/** The receiving host of a webhook destination id, either form: what pacing goes by. */
export function webhookHost(destination: string): string {
  const target = destination.slice('webhook:'.length);
  if (!LEGACY_WEBHOOK_ID.test(target)) return target.split('/')[0]!;
  try {
    return new URL(target).host;
  } catch {
    return target;
  }
}
