import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';
import { NOTIFICATIONS_CHANNEL } from '../ledger/alert-events.js';
import { deliverOne } from './deliver-one.js';
import { drainOutbox } from './drain.js';
import { probeCredentials } from './credential-probe.js';
import type { Pacer } from './pacer.js';
import { claimDue, createSenderContext, handBackStranded, type SenderContext, type SenderOptions } from './sender-context.js';
import type { Transport } from './transport.js';

export { backoffMs, type OutageNotice, type SenderOptions } from './sender-context.js';

export interface OutboxSender {
  /**
   * One round: claims the due head of each destination whose pace is free,
   * delivers them and resolves when all have settled. Never waits on the
   * clock, so a driver of a manual clock (tests, the replay) moves time between rounds.
   */
  tick(): Promise<boolean>;
  /** The replica's loop: a pipeline per destination with work, each kept at its pace (see `drainOutbox`). */
  loop: LoopSpec;
  pacer: Pacer;
  /** True while the loop is claiming or delivering; false when only the clock (or new rows) can move it on. */
  busy(): boolean;
}

/**
 * The outbox sender, generic over transports: claims due rows, asks the
 * transport for the row's kind to deliver them, and records the outcome.
 * It never sends a key twice on purpose: an unknown outcome is settled with
 * the transport's `findDelivered` before any resend. The jobs live one a
 * file: claiming (`claimDue`), the pipelines per destination (`drainOutbox`),
 * one delivery (`deliverOne`) and its input (read by the claim: `delivery-input.ts`).
 */
export function createOutboxSender(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId'>, transports: Transport[], options: SenderOptions = {}): OutboxSender {
  const ctx = createSenderContext(deps, transports, options);
  return {
    tick: () => sendRound(ctx),
    pacer: ctx.pacer,
    busy: () => ctx.awake.count > 0,
    loop: {
      name: 'outbox-sender',
      step: 'outbox',
      intervalMs: ctx.o.intervalMs,
      // Waiting on the clock with rows in hand needs a way to be told to stop:
      // called without the runner's signal (loops driven by hand), it makes one round.
      tick: (signal, progress) => (signal ? drainOutbox(ctx, signal, progress) : sendRound(ctx)),
      wakeOn: [NOTIFICATIONS_CHANNEL],
      onWake: () => ctx.lookNow(),
    },
  };
}

/** One round: the due head of each destination whose pace is free now, delivered at once. */
async function sendRound(ctx: SenderContext): Promise<boolean> {
  await handBackStranded(ctx);
  const now = ctx.deps.clock.now();
  await probeCredentials(ctx, now);
  const claimed = await claimDue(ctx, now, ctx.o.batch, ctx.pacer.blockedDestinations(now));
  if (claimed.length === 0) return false;
  await settleAll(claimed.map((c) => deliverOne(ctx, c)));
  return true;
}

/** Waits for every attempt, then fails with the first failure (a rejected one must not leave the others unwatched). */
async function settleAll(attempts: Promise<unknown>[]): Promise<void> {
  const outcomes = await Promise.allSettled(attempts);
  const failure = outcomes.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}
