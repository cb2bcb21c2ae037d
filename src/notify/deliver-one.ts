import { parseDestination } from '../domain/events.js';
import { metrics } from '../metrics.js';
import type { ClaimedNotification } from './claim-notifications.js';
import { loadDeliveryInput } from './delivery-input.js';
import type { SlotResult } from './pacer.js';
import { backoffMs, pacingOf, sleepOnClock, type SenderContext } from './sender-context.js';
import { markDead, markRetry, markSent, markUnknown, releaseUntried } from './settle-notification.js';
import type { DeliveryInput, DeliveryResult, Transport } from './transport.js';

/**
 * One claimed row: loads it, takes its pacing slot, settles an unknown
 * earlier outcome with the transport's `findDelivered` before any resend,
 * delivers and records the outcome. False when it was handed back untried
 * (its pace did not allow it).
 */
export async function deliverOne(ctx: SenderContext, claim: ClaimedNotification, wait?: AbortSignal): Promise<boolean> {
  const { deps, o, pacer, log } = ctx;
  const loaded = await loadDeliveryInput(deps.db, claim, deps.clock.now());
  const n = loaded.notification;
  const { kind } = parseDestination(n.destination);
  const transport = ctx.byKind.get(kind)!;
  const pacing = pacingOf(transport);
  const key = pacing?.key(n.destination);
  const previous = claim.previousStatus === 'sending' ? 'sending' : 'pending';
  if (pacing && key) {
    const slot = await takeSlot(ctx, key, n.destination, pacing.minIntervalMs, wait);
    if (!slot.ok) {
      await releaseUntried(deps.db, n.id, previous, slot.readyAt);
      return false;
    }
  }
  // The unit of work starts when the slot is taken: rendering and the outcome use this instant.
  const now = deps.clock.now();
  const input: DeliveryInput = { ...loaded, now };
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts };
  try {
    if (previous === 'sending' && transport.findDelivered) {
      const found = await transport.findDelivered(input);
      if (found.kind === 'found') {
        await markSent(deps.db, n.id, now, { ref: found.ref, ...found.result, recovered: true });
        metrics.deliveries.inc({ kind, result: 'recovered' });
        log.info(logCtx, 'notification found already delivered; not sending again');
        return true;
      }
      if (found.kind === 'failed') {
        if (found.permanent || n.attempts + 1 >= o.maxAttempts) {
          log.error({ ...logCtx, error: found.error }, 'notification undeliverable: its earlier attempt cannot be checked');
          await markDead(deps.db, n.id, `lookup failed: ${found.error}`);
          metrics.deliveries.inc({ kind, result: 'permanent' });
          return true;
        }
        if (found.retryAfterMs && key) await pacer.hold(key, n.destination, new Date(now.getTime() + found.retryAfterMs), now);
        await markUnknown(deps.db, n.id, new Date(now.getTime() + (found.retryAfterMs ?? backoffMs(n.attempts + 1, o))), `lookup failed: ${found.error}`);
        metrics.deliveries.inc({ kind, result: 'lookup_failed' });
        return true;
      }
    }
    const result = await transport.deliver(input);
    // Slack counts its pace from when a message arrives, which is after `now`:
    // pacing from the answer keeps the next one from landing early and costing a 429's whole Retry-After.
    if (result.kind === 'sent' && pacing && key) {
      const answered = deps.clock.now();
      await pacer.hold(key, n.destination, new Date(answered.getTime() + pacing.minIntervalMs), answered);
    }
    await settleDelivery(ctx, transport, key, input, result, now);
    return true;
  } catch (error) {
    // A bug or a database error mid-delivery: the outcome is unknown, so keep
    // the row `sending` for a lookup first, and let the runner log it.
    const message = error instanceof Error ? error.message : String(error);
    await markUnknown(deps.db, n.id, new Date(now.getTime() + backoffMs(n.attempts + 1, o)), message);
    metrics.deliveries.inc({ kind, result: 'error' });
    throw error;
  }
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

/** Records a transport's answer: sent, held for a rate limit, dead, or due again after a back-off. */
async function settleDelivery(ctx: SenderContext, transport: Transport, key: string | undefined, input: DeliveryInput, result: DeliveryResult, now: Date): Promise<void> {
  const { deps, o, pacer, log } = ctx;
  const n = input.notification;
  const kind = transport.kind;
  metrics.deliveries.inc({ kind, result: result.kind });
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts + 1 };
  switch (result.kind) {
    case 'sent':
      await markSent(deps.db, n.id, now, { ref: result.ref, ...result.result });
      return;
    case 'rate_limited': {
      const until = new Date(now.getTime() + result.retryAfterMs);
      if (key) await pacer.hold(key, n.destination, until, now);
      log.warn({ ...logCtx, retryAfterMs: result.retryAfterMs }, 'rate limited; holding this destination');
      await markRetry(deps.db, n.id, until, result.error ?? 'rate limited', false);
      return;
    }
    case 'permanent':
      log.error({ ...logCtx, error: result.error }, 'notification undeliverable');
      await markDead(deps.db, n.id, result.error);
      return;
    case 'transient':
    case 'unknown': {
      if (n.attempts + 1 >= o.maxAttempts) {
        log.error({ ...logCtx, error: result.error }, 'notification gave up');
        await markDead(deps.db, n.id, `gave up after ${n.attempts + 1} attempts: ${result.error}`);
        return;
      }
      const next = new Date(now.getTime() + backoffMs(n.attempts + 1, o));
      log.warn({ ...logCtx, error: result.error, outcome: result.kind, next }, 'delivery failed; will retry');
      if (result.kind === 'transient') await markRetry(deps.db, n.id, next, result.error, true);
      else await markUnknown(deps.db, n.id, next, result.error);
      return;
    }
  }
}
