import { parseDestination } from '../domain/events.js';
import { metrics } from '../metrics.js';
import type { ClaimedNotification } from './claim-notifications.js';
import type { SlotResult } from './pacer.js';
import { isConnectionError } from '../db/connection-errors.js';
import { redactSecrets } from '../secrets.js';
import { outageEndNotice, shownDestination, type Outage } from '../domain/destination-outage.js';
import { backoffMs, pacingOf, sleepOnClock, type OutageNotice, type SenderContext } from './sender-context.js';
import { holdDestination, markDead, markRetry, markSent, markUnknown, releaseUntried, type Held } from './settle-notification.js';
import type { DeliveryInput, DeliveryResult, Transport } from './transport.js';
import { leaseKeeper } from './lease-keeper.js';

/**
 * One claimed row (its input came with the claim): takes its pacing slot, settles an unknown
 * earlier outcome with the transport's `findDelivered` before any resend,
 * delivers and records the outcome. False when it was handed back untried
 * (its pace did not allow it).
 */
export async function deliverOne(ctx: SenderContext, claim: ClaimedNotification, wait?: AbortSignal): Promise<boolean> {
  try {
    return await deliverClaimed(ctx, claim, wait);
  } catch (error) {
    if (isConnectionError(error)) ctx.stranded.add(claim.id);
    throw error;
  }
}

async function deliverClaimed(ctx: SenderContext, claim: ClaimedNotification, wait?: AbortSignal): Promise<boolean> {
  const { deps, o, pacer, log } = ctx;
  const loaded = claim.input;
  const n = loaded.notification;
  const { kind } = parseDestination(n.destination);
  const transport = ctx.byKind.get(kind)!;
  const pacing = pacingOf(transport);
  const key = pacing?.key(n.destination);
  const previous = claim.previousStatus === 'sending' ? 'sending' : 'pending';
  const held: Held = { id: n.id, owner: deps.replicaId };
  if (pacing && key) {
    const slot = await takeSlot(ctx, key, n.destination, pacing.minIntervalMs, wait);
    if (!slot.ok) {
      await releaseUntried(deps.db, held, previous, slot.readyAt);
      return false;
    }
  }
  // The unit of work starts when the slot is taken: rendering and the outcome use this instant.
  const now = deps.clock.now();
  const lease = leaseKeeper(ctx, held);
  const input: DeliveryInput = { ...loaded, now, keepLease: lease.keepLease };
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts };
  // Error texts are the receiver's words (a body that may echo the webhook secret or the routing key),
  // stored and shown (the API, App Home, outage notices): cleaned like a run's output, in the tenant's scope.
  const clean = (text: string) => redactSecrets(text, loaded.tenant.id);
  try {
    if (previous === 'sending' && transport.findDelivered) {
      const found = withoutSecrets(await transport.findDelivered(input), clean);
      if (found.kind === 'found') {
        const ended = await markSent(deps.db, n.id, now, { ref: found.ref, ...found.result, recovered: true });
        metrics.deliveries.inc({ kind, result: 'recovered' });
        log.info(logCtx, 'notification found already delivered; not sending again');
        await endOutage(ctx, n.destination, ended, 'delivered', now);
        return true;
      }
      if (found.kind === 'failed') {
        if (found.permanent) {
          log.error({ ...logCtx, error: found.error }, 'notification undeliverable: its earlier attempt cannot be checked');
          const ended = await markDead(deps.db, held, `lookup failed: ${found.error}`);
          await endOutage(ctx, n.destination, ended, 'refused', now, `lookup failed: ${found.error}`);
          metrics.deliveries.inc({ kind, result: 'permanent' });
          return true;
        }
        metrics.deliveries.inc({ kind, result: 'lookup_failed' });
        if (found.retryAfterMs) {
          if (key) await pacer.hold(key, n.destination, new Date(now.getTime() + found.retryAfterMs), now);
          await markUnknown(deps.db, held, new Date(now.getTime() + found.retryAfterMs), `lookup failed: ${found.error}`);
        } else await holdFailing(ctx, n, `lookup failed: ${found.error}`, 'unknown', now);
        return true;
      }
    }
    const result = withoutSecrets(await transport.deliver(input), clean);
    await settleDelivery(ctx, transport, key, input, result, now, deps.clock.now());
    return true;
  } catch (error) {
    // A bug or a database error mid-delivery: the outcome is unknown, so keep
    // the row `sending` for a lookup first, and let the runner log it.
    const message = clean(error instanceof Error ? error.message : String(error));
    // The database failing is not the destination's fault: look again soon, not after a growing back-off.
    const delay = isConnectionError(error) ? o.baseBackoffMs : backoffMs(n.attempts + 1, o);
    await markUnknown(deps.db, held, new Date(now.getTime() + delay), message);
    metrics.deliveries.inc({ kind, result: 'error' });
    throw error;
  } finally {
    lease.end();
  }
}

/** A transport's answer with the secrets its error text may carry removed. */
function withoutSecrets<R extends { kind: string; error?: string }>(result: R, clean: (text: string) => string): R {
  return typeof result.error === 'string' ? { ...result, error: clean(result.error) } : result;
}

/**
 * Takes the row's pacing slot. With `wait` (the loop), reserves the first
 * free one within `holdMs` and sleeps on the clock until it opens; without
 * (a round), takes it only if it is free now.
 */
async function takeSlot(ctx: SenderContext, key: string, destination: string, intervalMs: number, wait?: AbortSignal): Promise<SlotResult> {
  const { deps, o, pacer } = ctx;
  for (;;) {
    const now = deps.clock.now();
    const at = new Date(Math.max(now.getTime(), wait ? (pacer.readyAt(key)?.getTime() ?? 0) : 0));
    if (at.getTime() - now.getTime() > o.holdMs) return { ok: false, readyAt: at };
    const slot = await pacer.take(key, destination, now, intervalMs, at);
    if (!wait) return slot;
    if (slot.ok) {
      const waitMs = at.getTime() - deps.clock.now().getTime();
      if (waitMs > 0) await sleepOnClock(ctx, waitMs, wait);
      // Stopping before the slot: the reservation lapses on its own within one interval.
      return wait.aborted ? { ok: false, readyAt: at } : slot;
    }
    if (wait.aborted) return slot;
  }
}

/**
 * Records a transport's answer (received at `answered`): sent, held for a
 * rate limit, dead, or due again after a back-off. `sent` is recorded first,
 * in one statement, before the pace or anything else: a replica that dies
 * between the receiver's answer and that statement leaves a delivered row
 * that the next claimer sends again (a webhook cannot be asked whether it
 * arrived; the repeat carries the same Idempotency-Key), so that window holds
 * nothing else.
 */
async function settleDelivery(ctx: SenderContext, transport: Transport, key: string | undefined, input: DeliveryInput, result: DeliveryResult, now: Date, answered: Date): Promise<void> {
  const { deps, o, pacer, log } = ctx;
  const n = input.notification;
  const kind = transport.kind;
  metrics.deliveries.inc({ kind, result: result.kind });
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts + 1 };
  switch (result.kind) {
    case 'sent': {
      const ended = await markSent(deps.db, n.id, now, { ref: result.ref, ...result.result });
      // Slack counts its pace from when a message arrives, which is after `now`:
      // pacing from the answer keeps the next one from landing early and costing a 429's whole Retry-After.
      const pacing = pacingOf(transport);
      if (pacing && key) await pacer.hold(key, n.destination, new Date(answered.getTime() + pacing.minIntervalMs), answered);
      await endOutage(ctx, n.destination, ended, 'delivered', now);
      return;
    }
    case 'rate_limited': {
      const until = new Date(now.getTime() + result.retryAfterMs);
      if (key) await pacer.hold(key, n.destination, until, now);
      log.warn({ ...logCtx, retryAfterMs: result.retryAfterMs }, 'rate limited; holding this destination');
      await markRetry(deps.db, { id: n.id, owner: deps.replicaId }, until, result.error ?? 'rate limited', false);
      return;
    }
    case 'permanent': {
      log.error({ ...logCtx, error: result.error }, 'notification undeliverable');
      const ended = await markDead(deps.db, { id: n.id, owner: deps.replicaId }, result.error);
      await endOutage(ctx, n.destination, ended, 'refused', now, result.error);
      return;
    }
    case 'transient':
    case 'unknown':
      await holdFailing(ctx, n, result.error, result.kind, now);
      return;
    case 'lease_lost':
      // Nothing was sent, and the row is another replica's: it settles it, this sender writes nothing.
      log.warn(logCtx, 'stalled past its lease before sending; left to the replica holding it now');
      return;
  }
}

/** A transient failure: the destination is held, the row waits with it; past the threshold the platform hears once. */
async function holdFailing(ctx: SenderContext, n: DeliveryInput['notification'], error: string, outcome: 'transient' | 'unknown', now: Date): Promise<void> {
  const { outage, raiseNotice } = await holdDestination(ctx.deps.db, { row: { id: n.id, owner: ctx.deps.replicaId }, destination: n.destination, error, outcome, now, policy: ctx.o });
  ctx.log.warn({ id: n.id, destination: shownDestination(n.destination), error, outcome, failures: outage.failures, next: outage.heldUntil }, 'delivery failed; destination held, will retry');
  if (raiseNotice) await notifyOutage(ctx, { kind: 'outage', destination: n.destination, outage, now });
}

/**
 * An outage `markSent` or `markDead` just ended (if the destination had one):
 * told as src/domain/destination-outage.ts decides. A refusal's notice
 * carries the refusing answer as its last error.
 */
async function endOutage(ctx: SenderContext, destination: string, ended: Outage | undefined, how: 'delivered' | 'refused', now: Date, answer?: string): Promise<void> {
  if (!ended) return;
  const kind = outageEndNotice(ended, how);
  if (!kind) {
    ctx.log.info({ destination: shownDestination(destination), failingSince: ended.failingSince, failures: ended.failures, how }, 'destination answered again; its outage is over');
    return;
  }
  await notifyOutage(ctx, { kind, destination, outage: answer === undefined ? ended : { ...ended, lastError: answer }, now });
}

const NOTICE_RESULT = { outage: 'outage_notice', recovered: 'outage_recovered', refused: 'outage_refused' } as const;

async function notifyOutage(ctx: SenderContext, notice: OutageNotice): Promise<void> {
  const { destination, outage } = notice;
  const logCtx = { destination: shownDestination(destination), failingSince: outage.failingSince, failures: outage.failures, lastError: outage.lastError };
  if (notice.kind === 'outage') ctx.log.error(logCtx, 'destination failing for longer than the notice threshold; its notifications are held and will be delivered in order');
  else if (notice.kind === 'recovered') ctx.log.warn(logCtx, 'destination recovered; held notifications are being delivered');
  else ctx.log.error(logCtx, 'destination answered again but refused for good; its outage is over, and notifications it refuses go dead');
  metrics.deliveries.inc({ kind: parseDestination(destination).kind, result: NOTICE_RESULT[notice.kind] });
  // The log line and the counter above are the notice of record; a platform
  // channel that cannot be reached must not turn into a failed delivery.
  await ctx.o.onOutage?.(notice).catch((err: unknown) => ctx.log.warn({ ...logCtx, err }, 'could not post the outage notice to the platform channel'));
}
