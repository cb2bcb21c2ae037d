import { parseDestination } from '../domain/events.js';
import { metrics } from '../metrics.js';
import type { ClaimedNotification } from './claim-notifications.js';
import type { SlotResult } from './pacer.js';
import { isConnectionError } from '../db/connection-errors.js';
import { redactSecrets } from '../secrets.js';
import { shownDestination } from '../domain/destination-outage.js';
import { backoffMs, pacingOf, sleepOnClock, type SenderContext } from './sender-context.js';
import { holdDestination, markDead, markRetry, markSent, markSkipped, markUnknown, releaseUntried, type Held } from './settle-notification.js';
import { holdForCredentials } from './credential-probe.js';
import { endOutages, notifyOutage, tellRefusal } from './outage-notices.js';
import type { DeliveryInput, DeliveryResult, Transport } from './transport.js';
import { leaseKeeper } from './lease-keeper.js';

/**
 * One claimed row (its input came with the claim): settles an unknown
 * earlier outcome with the transport's `findDelivered` before any resend,
 * takes its pacing slot, delivers and records the outcome. False when it was
 * handed back untried (its pace did not allow it).
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
  const { deps } = ctx;
  const n = claim.input.notification;
  const transport = ctx.byKind.get(parseDestination(n.destination).kind)!;
  const pacing = pacingOf(transport);
  const key = pacing?.key(n.destination);
  // A row that posts nothing (re-rendered in place) spends none of the destination's pace.
  const paced = pacing && key && (!transport.posts || (await transport.posts(claim.input))) ? pacing : undefined;
  const held: Held & { destination: string } = { id: n.id, owner: deps.replicaId, destination: n.destination };
  let previous: 'pending' | 'sending' = claim.previousStatus === 'sending' ? 'sending' : 'pending';
  // An earlier attempt may have been delivered: look first. A lookup posts nothing, so it takes no
  // slot of the channel's posting pace; only a row found not delivered waits for one.
  if (previous === 'sending' && transport.findDelivered) {
    if (await settleEarlierAttempt(ctx, claim, transport, key)) return true;
    previous = 'pending';
  }
  if (paced && key) {
    const slot = await takeSlot(ctx, key, n.destination, paced.minIntervalMs, wait);
    if (!slot.ok) {
      // Known not delivered (looked up above, or never tried): handed back as `pending`, not looked up again.
      await releaseUntried(deps.db, held, previous, slot.readyAt);
      return false;
    }
  }
  // The unit of work starts when the slot is taken: rendering and the outcome use this instant.
  const now = deps.clock.now();
  return withLease(ctx, claim, now, async (input) => {
    const result = withoutSecrets(await transport.deliver(input), cleaner(claim));
    await settleDelivery(ctx, transport, key, input, result, now, deps.clock.now(), !!paced);
    // Its tenant had its turn at the destination: the next row there is another tenant's, if any waits.
    ctx.turns.set(n.destination, claim.input.tenant.id);
    return true;
  });
}

/** Error texts are the receiver's words (a body may echo the webhook secret or the routing key): cleaned like a run's output, in the tenant's scope. */
const cleaner = (claim: ClaimedNotification) => (text: string) => redactSecrets(text, claim.input.tenant.id);

/**
 * Runs one step of a claimed row's delivery under its kept lease. A bug or a
 * database error mid-way leaves the outcome unknown: the row stays `sending`
 * (looked up first next time), due soon for a database failure, after the
 * back-off otherwise, and the runner logs the error.
 */
async function withLease(ctx: SenderContext, claim: ClaimedNotification, now: Date, step: (input: DeliveryInput) => Promise<boolean>): Promise<boolean> {
  const { deps, o } = ctx;
  const n = claim.input.notification;
  const held: Held = { id: n.id, owner: deps.replicaId };
  const lease = leaseKeeper(ctx, held);
  try {
    return await step({ ...claim.input, now, keepLease: lease.keepLease });
  } catch (error) {
    const message = cleaner(claim)(error instanceof Error ? error.message : String(error));
    // The database failing is not the destination's fault: look again soon, not after a growing back-off.
    const delay = isConnectionError(error) ? o.baseBackoffMs : backoffMs(n.attempts + 1, o);
    await markUnknown(deps.db, held, new Date(now.getTime() + delay), message);
    metrics.deliveries.inc({ kind: parseDestination(n.destination).kind, result: 'error' });
    throw error;
  } finally {
    lease.end();
  }
}

/**
 * A row whose earlier attempt's outcome is unknown, looked up with the
 * transport's `findDelivered`: true when that settled it (found delivered,
 * or the lookup failed and the row waits, still `sending`); false when it
 * was not delivered, so it is sent like a new one.
 */
async function settleEarlierAttempt(ctx: SenderContext, claim: ClaimedNotification, transport: Transport, key: string | undefined): Promise<boolean> {
  const { deps, pacer, log } = ctx;
  const n = claim.input.notification;
  const kind = transport.kind;
  const held: Held & { destination: string } = { id: n.id, owner: deps.replicaId, destination: n.destination };
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts };
  const now = deps.clock.now();
  return withLease(ctx, claim, now, async (input) => {
    const found = withoutSecrets(await transport.findDelivered!(input), cleaner(claim));
    if (found.kind === 'not_found') return false;
    if (found.kind === 'found') {
      const ended = await markSent(deps.db, n, now, { ref: found.ref, ...found.result, recovered: true });
      metrics.deliveries.inc({ kind, result: 'recovered' });
      log.info(logCtx, 'notification found already delivered; not sending again');
      await endOutages(ctx, ended, 'delivered', now);
      return true;
    }
    if (found.permanent) {
      log.error({ ...logCtx, error: found.error }, 'notification undeliverable: its earlier attempt cannot be checked');
      const ended = await markDead(deps.db, held, `lookup failed: ${found.error}`);
      await endOutages(ctx, ended, 'refused', now, `lookup failed: ${found.error}`);
      metrics.deliveries.inc({ kind, result: 'permanent' });
      return true;
    }
    metrics.deliveries.inc({ kind, result: found.credentials ? 'credentials' : 'lookup_failed' });
    // The lookup met refused credentials: the row stays `sending` (looked up first once they work), held with every row of its scope.
    if (found.credentials) await holdForCredentials(ctx, n, `lookup failed: ${found.error}`, 'unknown', now);
    else if (found.retryAfterMs) {
      if (key) await pacer.hold(key, n.destination, new Date(now.getTime() + found.retryAfterMs), now);
      await markUnknown(deps.db, held, new Date(now.getTime() + found.retryAfterMs), `lookup failed: ${found.error}`);
    } else await holdFailing(ctx, n, `lookup failed: ${found.error}`, 'unknown', now);
    return true;
  });
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
async function settleDelivery(ctx: SenderContext, transport: Transport, key: string | undefined, input: DeliveryInput, result: DeliveryResult, now: Date, answered: Date, paced = true): Promise<void> {
  const { deps, o, pacer, log } = ctx;
  const n = input.notification;
  const kind = transport.kind;
  metrics.deliveries.inc({ kind, result: result.kind });
  const logCtx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts + 1 };
  switch (result.kind) {
    case 'sent': {
      const ended = await markSent(deps.db, n, now, { ref: result.ref, ...result.result });
      // Slack counts its pace from when a message arrives, which is after `now`:
      // pacing from the answer keeps the next one from landing early and costing a 429's whole Retry-After.
      const pacing = pacingOf(transport);
      if (pacing && key && paced) await pacer.hold(key, n.destination, new Date(answered.getTime() + pacing.minIntervalMs), answered);
      await endOutages(ctx, ended, 'delivered', now);
      return;
    }
    case 'skipped':
      log.debug({ ...logCtx, reason: result.reason }, 'not sent: nothing to send any more');
      await markSkipped(deps.db, { id: n.id, owner: deps.replicaId }, result.reason);
      return;
    case 'rate_limited': {
      const until = new Date(now.getTime() + result.retryAfterMs);
      if (key) await pacer.hold(key, n.destination, until, now);
      log.warn({ ...logCtx, retryAfterMs: result.retryAfterMs }, 'rate limited; holding this destination');
      await markRetry(deps.db, { id: n.id, owner: deps.replicaId }, until, result.error ?? 'rate limited', false);
      return;
    }
    case 'permanent': {
      log.error({ ...logCtx, error: result.error }, 'notification undeliverable');
      const ended = await markDead(deps.db, { id: n.id, owner: deps.replicaId, destination: n.destination }, result.error);
      const told = await endOutages(ctx, ended, 'refused', now, result.error);
      if (!result.expected) await tellRefusal(ctx, n.destination, result.error, now, told);
      return;
    }
    case 'credentials':
      await holdForCredentials(ctx, n, result.error, 'transient', now);
      return;
    case 'transient':
    case 'unknown':
      await holdFailing(ctx, n, result.error, result.kind, now);
      return;
    case 'busy':
      // Not the destination's fault: its other rows go on, and this one is due again shortly.
      log.debug({ ...logCtx, error: result.error }, 'waiting for another delivery; retrying shortly');
      await markRetry(deps.db, { id: n.id, owner: deps.replicaId }, new Date(now.getTime() + result.retryAfterMs), result.error, false);
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
