import type { Db } from '../db/connect.js';
import type { Notification } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { parseDestination } from '../domain/events.js';
import type { LoopSpec } from '../engine/runner.js';
import { metrics } from '../metrics.js';
import { NOTIFICATIONS_CHANNEL } from '../services/alert-events.js';
import { claimNotifications, type ClaimedNotification } from './claim-notifications.js';
import { Pacer } from './pacer.js';
import { markDead, markRetry, markSent, markUnknown, releaseUntried } from './settle-notification.js';
import type { DeliveryInput, DeliveryResult, Transport } from './transport.js';

export interface SenderOptions {
  /** Rows claimed per tick (at most one per destination). */
  batch?: number;
  leaseMs?: number;
  /** First retry delay; doubles per attempt up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** After this many failed attempts a row goes dead (and shows on the App Home). */
  maxAttempts?: number;
  intervalMs?: number;
}

const DEFAULTS = { batch: 50, leaseMs: 60_000, baseBackoffMs: 1000, maxBackoffMs: 10 * 60_000, maxAttempts: 15, intervalMs: 250 };

export function backoffMs(attempts: number, o: Pick<typeof DEFAULTS, 'baseBackoffMs' | 'maxBackoffMs'>): number {
  return Math.min(o.maxBackoffMs, o.baseBackoffMs * 2 ** Math.max(0, attempts - 1));
}

export interface OutboxSender {
  tick(): Promise<boolean>;
  loop: LoopSpec;
  pacer: Pacer;
}

/**
 * The outbox sender, generic over transports: claims due rows, asks the
 * transport for the row's kind to deliver them, and records the outcome.
 * It never sends a key twice on purpose: an unknown outcome is settled with
 * the transport's `findDelivered` before any resend.
 */
export function createOutboxSender(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId'>, transports: Transport[], options: SenderOptions = {}): OutboxSender {
  const o = { ...DEFAULTS, ...options };
  const byKind = new Map(transports.map((t) => [t.kind, t]));
  const pacer = new Pacer();
  const log = deps.logger.child({ loop: 'outbox-sender' });

  async function tick(): Promise<boolean> {
    const now = deps.clock.now();
    const claimed = await claimNotifications(deps.db, {
      now,
      owner: deps.replicaId,
      leaseMs: o.leaseMs,
      limit: o.batch,
      kinds: [...byKind.keys()],
      exclude: pacer.blockedDestinations(now),
    });
    if (claimed.length === 0) return false;
    await Promise.all(claimed.map((c) => deliverOne(c, now)));
    return true;
  }

  async function deliverOne(claim: ClaimedNotification, now: Date): Promise<void> {
    const input = await loadDeliveryInput(deps.db, claim.id, now);
    if (!input) return;
    const n = input.notification;
    const { kind } = parseDestination(n.destination);
    const transport = byKind.get(kind)!;
    const previous = claim.previousStatus === 'sending' ? 'sending' : 'pending';
    if (transport.pacing) {
      const key = transport.pacing.key(n.destination);
      if (!pacer.take(key, n.destination, now, transport.pacing.minIntervalMs)) {
        await releaseUntried(deps.db, n.id, previous, pacer.readyAt(key) ?? now);
        return;
      }
    }
    const ctx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts };
    try {
      if (previous === 'sending' && transport.findDelivered) {
        const found = await transport.findDelivered(input);
        if (found.kind === 'found') {
          await markSent(deps.db, n.id, now, { ref: found.ref, ...found.result, recovered: true });
          metrics.deliveries.inc({ kind, result: 'recovered' });
          log.info(ctx, 'notification found already delivered; not sending again');
          return;
        }
        if (found.kind === 'failed') {
          if (found.permanent || n.attempts + 1 >= o.maxAttempts) {
            log.error({ ...ctx, error: found.error }, 'notification undeliverable: its earlier attempt cannot be checked');
            await markDead(deps.db, n.id, `lookup failed: ${found.error}`);
            metrics.deliveries.inc({ kind, result: 'permanent' });
            return;
          }
          if (found.retryAfterMs && transport.pacing) pacer.hold(transport.pacing.key(n.destination), n.destination, new Date(now.getTime() + found.retryAfterMs));
          await markUnknown(deps.db, n.id, new Date(now.getTime() + (found.retryAfterMs ?? backoffMs(n.attempts + 1, o))), `lookup failed: ${found.error}`);
          metrics.deliveries.inc({ kind, result: 'lookup_failed' });
          return;
        }
      }
      const result = await transport.deliver(input);
      // Slack counts its pace from when a message arrives, which is after `now`:
      // pacing from the answer keeps the next one from landing early and costing a 429's whole Retry-After.
      if (result.kind === 'sent' && transport.pacing && transport.pacing.minIntervalMs > 0) {
        pacer.hold(transport.pacing.key(n.destination), n.destination, new Date(deps.clock.now().getTime() + transport.pacing.minIntervalMs));
      }
      await settle(transport, input, result, now);
    } catch (error) {
      // A bug or a database error mid-delivery: the outcome is unknown, so keep
      // the row `sending` for a lookup first, and let the runner log it.
      const message = error instanceof Error ? error.message : String(error);
      await markUnknown(deps.db, n.id, new Date(now.getTime() + backoffMs(n.attempts + 1, o)), message);
      metrics.deliveries.inc({ kind, result: 'error' });
      throw error;
    }
  }

  async function settle(transport: Transport, input: DeliveryInput, result: DeliveryResult, now: Date): Promise<void> {
    const n = input.notification;
    const kind = transport.kind;
    metrics.deliveries.inc({ kind, result: result.kind });
    const ctx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts + 1 };
    switch (result.kind) {
      case 'sent':
        await markSent(deps.db, n.id, now, { ref: result.ref, ...result.result });
        return;
      case 'rate_limited': {
        const until = new Date(now.getTime() + result.retryAfterMs);
        if (transport.pacing) pacer.hold(transport.pacing.key(n.destination), n.destination, until);
        log.warn({ ...ctx, retryAfterMs: result.retryAfterMs }, 'rate limited; holding this destination');
        await markRetry(deps.db, n.id, until, result.error ?? 'rate limited', false);
        return;
      }
      case 'permanent':
        log.error({ ...ctx, error: result.error }, 'notification undeliverable');
        await markDead(deps.db, n.id, result.error);
        return;
      case 'transient':
      case 'unknown': {
        if (n.attempts + 1 >= o.maxAttempts) {
          log.error({ ...ctx, error: result.error }, 'notification gave up');
          await markDead(deps.db, n.id, `gave up after ${n.attempts + 1} attempts: ${result.error}`);
          return;
        }
        const next = new Date(now.getTime() + backoffMs(n.attempts + 1, o));
        log.warn({ ...ctx, error: result.error, outcome: result.kind, next }, 'delivery failed; will retry');
        if (result.kind === 'transient') await markRetry(deps.db, n.id, next, result.error, true);
        else await markUnknown(deps.db, n.id, next, result.error);
        return;
      }
    }
  }

  return {
    tick,
    pacer,
    loop: { name: 'outbox-sender', intervalMs: o.intervalMs, tick, wakeOn: [NOTIFICATIONS_CHANNEL] },
  };
}

/** The row, its event and the alert as it is now. Undefined if the row vanished (it never should). */
export async function loadDeliveryInput(db: Db, id: number, now: Date): Promise<DeliveryInput | undefined> {
  const notification = await db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
  if (!notification) return undefined;
  const event = await db.selectFrom('alertEvents').selectAll().where('id', '=', notification.eventId).executeTakeFirstOrThrow();
  const alert = await db.selectFrom('alerts').selectAll().where('id', '=', notification.alertId).executeTakeFirstOrThrow();
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  const behind = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('alertId', '=', notification.alertId)
    .where('destination', '=', notification.destination)
    .where('id', '>', notification.id)
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirstOrThrow();
  return { notification: notification as Notification, target: parseDestination(notification.destination).target, event, alert, workflow, tenant, queuedBehind: Number(behind.n), now };
}
