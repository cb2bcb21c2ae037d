import type { Alert, AlertEvent, Notification, Run, Tenant, Workflow } from '../db/schema.js';

/** The alert's last run as messages show it (its stage and log). */
export type LastRun = Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'>;

/**
 * What the outbox sender hands a transport: one claimed notification row and
 * the alert as it is now (rendering is always from current state; the event
 * says what just happened). The claim reads it; the transport never needs to
 * know why the event happened.
 */
export interface DeliveryInput {
  notification: Notification;
  /** The part of `notification.destination` after `kind:` (`slack:C0123` → `C0123`). */
  target: string;
  event: AlertEvent;
  alert: Alert;
  workflow: Workflow;
  tenant: Tenant;
  /** The alert's last run (`alerts.last_run_id`), if any. */
  lastRun: LastRun | null;
  /** Pending rows for the same alert and destination queued behind this one (lets a transport coalesce). */
  queuedBehind: number;
  /** The sender's clock reading for this unit of work. */
  now: Date;
  /**
   * Renews this row's lease (a whole lease from now). A transport calls it
   * right before each request that delivers something (a post, an edit, a
   * page, a mail) and sends nothing when it resolves to undefined: the row
   * is no longer this sender's (it stalled past its lease and another
   * replica took the row over or settled it), so it answers `lease_lost`.
   * Otherwise the signal aborts shortly before the renewed lease ends: a
   * send still under way then must be cut off, since past it another
   * replica may claim the row and send it again.
   */
  keepLease(): Promise<AbortSignal | undefined>;
}

/**
 * The outcome of one delivery attempt, classified once by the transport:
 * - sent: delivered; `ref` is the transport's id for it (Slack: the message ts).
 * - rate_limited: refused before anything was delivered; wait `retryAfterMs` for this pacing key only.
 * - permanent: will never work as configured (channel gone, message too long…); the row goes dead.
 * - credentials: the receiver refused the bot's credentials (a revoked Slack token, a 401/403):
 *   nothing is wrong with the row, so it is not dead; the destination (for Slack, the
 *   workspace: `credentialScope`) is held until they work again, and every row waits, in order.
 * - transient: refused or failed before delivery; retry with backoff.
 * - unknown: the request may have been accepted (timeout, connection lost after sending);
 *   before sending again the sender asks `findDelivered`.
 * - lease_lost: nothing was sent; the row is another replica's now, and this sender writes nothing.
 * - busy: nothing was sent because another delivery holds what this one needs (a storm message
 *   being posted by another row); due again after `retryAfterMs`, the destination not held
 *   (it is not failing) and no attempt counted.
 */
export type DeliveryResult =
  | { kind: 'sent'; ref: string; result?: Record<string, unknown> }
  /** Not sent, and never will be: nothing about the destination learnt (its pace and outage untouched); the row settles `skipped`. */
  | { kind: 'skipped'; reason: string }
  | { kind: 'rate_limited'; retryAfterMs: number; error?: string }
  /** expected: a dead end the operator chose (the destination removed), not told to the platform. */
  | { kind: 'permanent'; error: string; expected?: boolean }
  | { kind: 'credentials'; error: string }
  | { kind: 'transient'; error: string }
  | { kind: 'unknown'; error: string }
  | { kind: 'busy'; error: string; retryAfterMs: number }
  | LeaseLost;

/** Nothing was sent: the row's lease had run out and another replica holds the row (see `DeliveryInput.keepLease`). */
export type LeaseLost = { kind: 'lease_lost' };
export const LEASE_LOST: LeaseLost = { kind: 'lease_lost' };

export type FindDeliveredResult =
  | { kind: 'found'; ref: string; result?: Record<string, unknown> }
  | { kind: 'not_found' }
  /** The lookup itself failed: try again later, and do not send meanwhile. */
  | { kind: 'failed'; error: string; retryAfterMs?: number; permanent?: boolean; credentials?: boolean };

/** A probe of the credentials a whole kind shares (Slack: `auth.test` with the bot token). */
export type CredentialProbe = { ok: true } | { ok: false; error: string; credentials: boolean };

export interface Transport {
  /** The destination prefix this transport handles (`slack` for `slack:C0123`). */
  readonly kind: string;
  deliver(input: DeliveryInput): Promise<DeliveryResult>;
  /**
   * Looks for an earlier delivery of `input.notification.idempotencyKey` whose
   * outcome was unknown. Without it, an unknown outcome is resent (at-least-once).
   */
  findDelivered?(input: DeliveryInput): Promise<FindDeliveredResult>;
  /**
   * Destinations sharing a pacing key share one pace: at most one delivery per
   * `minIntervalMs`, and a rate limit on one holds back only that key.
   * The key depends on the destination alone (Slack: the channel).
   */
  pacing?: { key(destination: string): string; minIntervalMs: number };
  /**
   * Whether delivering this row may post a message the pace counts: false
   * only when it surely posts nothing (Slack: a quiet event, or a storm
   * member's once the storm message is up, re-rendered in place), and then
   * it takes no pacing slot and holds none after. Without it, every row of
   * a paced kind is paced.
   */
  posts?(input: Omit<DeliveryInput, 'now' | 'keepLease'>): Promise<boolean>;
  /**
   * Asks the receiver whether the credentials every destination of this kind
   * shares work (`credentials: false`: it could not tell, try later). The
   * only way a `<kind>:*` credential outage ends (src/notify/credential-probe.ts).
   */
  probeCredentials?(): Promise<CredentialProbe>;
}
