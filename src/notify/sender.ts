import type { Db } from '../db/connect.js';
import { isConnectionError } from '../db/connection-errors.js';
import type { Deps } from '../deps.js';
import { shownDestination, type Outage } from '../domain/destination-outage.js';
import { parseDestination } from '../domain/events.js';
import type { LoopSpec } from '../engine/runner.js';
import { metrics } from '../metrics.js';
import { NOTIFICATIONS_CHANNEL } from '../services/alert-events.js';
import { claimNotifications, type ClaimedNotification } from './claim-notifications.js';
import { Pacer, type SlotResult } from './pacer.js';
import { holdDestination, markDead, markRetry, markSent, markUnknown, releaseLeases, releaseUntried } from './settle-notification.js';
import type { DeliveryInput, DeliveryResult, Transport } from './transport.js';

export interface SenderOptions {
  /** Rows claimed per look (at most one per destination). */
  batch?: number;
  leaseMs?: number;
  /** First hold of a failing destination; doubles per consecutive failure up to maxBackoffMs, then stays there: transient failures are retried forever. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** A destination failing for longer than this raises one notice (log, metric, `onOutage`), and another when it recovers. */
  noticeAfterMs?: number;
  /** Tells the platform (its channel) about a long outage; never called for the failing destination's own words to matter. */
  onOutage?: (notice: OutageNotice) => Promise<void>;
  intervalMs?: number;
  /** While deliveries are under way, how often the loop looks for destinations that got work (NOTIFY cannot reach a running tick). */
  lookMs?: number;
  /** A claimed row waits in process for its pacing slot at most this long; a longer wait (a rate limit) hands it back, due at the slot. */
  holdMs?: number;
}

const DEFAULTS = { batch: 50, leaseMs: 60_000, baseBackoffMs: 1000, maxBackoffMs: 10 * 60_000, noticeAfterMs: 15 * 60_000, intervalMs: 250, lookMs: 100, holdMs: 5_000 };

/** A destination has been failing longer than `noticeAfterMs` (`outage`), or has just recovered from such an outage (`recovered`). */
export interface OutageNotice {
  kind: 'outage' | 'recovered';
  destination: string;
  outage: Outage;
  now: Date;
}

export function backoffMs(attempts: number, o: Pick<typeof DEFAULTS, 'baseBackoffMs' | 'maxBackoffMs'>): number {
  return Math.min(o.maxBackoffMs, o.baseBackoffMs * 2 ** Math.max(0, attempts - 1));
}

export interface OutboxSender {
  /**
   * One round: claims the due head of each destination whose pace is free,
   * delivers them and resolves when all have settled. Never waits on the
   * clock, so a driver of a manual clock (tests, the replay) moves time between rounds.
   */
  tick(): Promise<boolean>;
  /** The replica's loop: a pipeline per destination with work, each kept at its pace (see `drain`). */
  loop: LoopSpec;
  pacer: Pacer;
  /** True while the loop is claiming or delivering; false when only the clock (or new rows) can move it on. */
  busy(): boolean;
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
  const kinds = [...byKind.keys()];
  const pacer = new Pacer(deps.db);
  const log = deps.logger.child({ loop: 'outbox-sender' });
  /** Loop work not asleep on the clock (the drain and its pipelines). */
  let awake = 0;
  /**
   * Rows this sender claimed whose outcome it could not write back because
   * the database failed under it. Left alone they would wait out their whole
   * lease (a minute) after the database is back; instead their leases are
   * dropped at the next look, still `sending`, so the next claimer checks
   * for an earlier delivery before sending again.
   */
  const stranded = new Set<number>();

  async function handBackStranded(): Promise<void> {
    if (stranded.size === 0) return;
    const ids = [...stranded];
    await releaseLeases(deps.db, ids, deps.replicaId);
    for (const id of ids) stranded.delete(id);
  }

  const claim = (now: Date, limit: number, exclude: string[], only?: string[]) =>
    claimNotifications(deps.db, { now, owner: deps.replicaId, leaseMs: o.leaseMs, limit, kinds, exclude, ...(only ? { only } : {}) });

  async function tick(): Promise<boolean> {
    await handBackStranded();
    const now = deps.clock.now();
    const claimed = await claim(now, o.batch, pacer.blockedDestinations(now));
    if (claimed.length === 0) return false;
    await settleAll(claimed.map((c) => attempt(c)));
    return true;
  }

  /**
   * Keeps every destination with work busy at its pace until none has any:
   * each claimed destination gets a pipeline that delivers a row, claims
   * that destination's next head at once, prepares it (loads it) and then
   * waits on the clock for the pacing slot, so a channel's next message
   * leaves the moment Slack's pace allows rather than when the slowest of a
   * batch has settled. Meanwhile it looks for newly busy destinations every
   * `lookMs` and whenever a pipeline ends. Rows held in process past a
   * replica's death are not lost: their lease runs out and the next claimer
   * looks them up before sending again. On `signal` the pipelines finish the
   * row in hand and hand back the ones still waiting for a slot.
   */
  async function drain(signal: AbortSignal): Promise<boolean> {
    const failed = new AbortController();
    const halt = AbortSignal.any([signal, failed.signal]);
    const running = new Map<string, Promise<void>>();
    const failures: unknown[] = [];
    let ended = new AbortController();
    let found = false;
    awake++;
    try {
      await handBackStranded();
      while (!halt.aborted) {
        ended = new AbortController();
        const now = deps.clock.now();
        // Destinations paced beyond what a pipeline waits out in process are left for later looks.
        const exclude = [...running.keys(), ...pacer.blockedDestinations(new Date(now.getTime() + o.holdMs))];
        for (const c of await claim(now, o.batch, exclude)) {
          found = true;
          const done = pipeline(c, halt)
            .catch((error: unknown) => {
              failures.push(error);
              failed.abort();
            })
            .finally(() => {
              running.delete(c.destination);
              ended.abort();
            });
          running.set(c.destination, done);
        }
        if (running.size === 0) break;
        await sleep(o.lookMs, AbortSignal.any([halt, ended.signal]));
      }
    } catch (error) {
      failures.push(error);
      failed.abort();
    } finally {
      awake--;
      await Promise.all(running.values());
    }
    // Every pipeline has settled or handed its row back; the runner logs this and backs off.
    if (failures.length > 0) throw failures[0];
    return found;
  }

  async function pipeline(first: ClaimedNotification, halt: AbortSignal): Promise<void> {
    awake++;
    try {
      for (let next: ClaimedNotification | undefined = first; next && !halt.aborted; ) {
        if (!(await attempt(next, halt)) || halt.aborted) return;
        if (heldPast(next.destination, new Date(deps.clock.now().getTime() + o.holdMs))) return;
        [next] = await claim(deps.clock.now(), 1, [], [next.destination]);
      }
    } finally {
      awake--;
    }
  }

  function heldPast(destination: string, at: Date): boolean {
    const pacing = pacingOf(byKind.get(parseDestination(destination).kind)!);
    const readyAt = pacing && pacer.readyAt(pacing.key(destination));
    return !!readyAt && readyAt > at;
  }

  async function sleep(ms: number, signal: AbortSignal): Promise<void> {
    awake--;
    try {
      // A signal of its own per sleep: a clock's abort listener then never piles up on the drain's long-lived one.
      await deps.clock.sleep(ms, AbortSignal.any([signal]));
    } finally {
      awake++;
    }
  }

  /**
   * Takes the row's pacing slot. With `wait` (the loop), reserves the first
   * free one within `holdMs` and sleeps on the clock until it opens; without
   * (a round), takes it only if it is free now.
   */
  async function takeSlot(key: string, destination: string, intervalMs: number, wait?: AbortSignal): Promise<SlotResult> {
    for (;;) {
      const now = deps.clock.now();
      const at = new Date(Math.max(now.getTime(), wait ? (pacer.readyAt(key)?.getTime() ?? 0) : 0));
      if (at.getTime() - now.getTime() > o.holdMs) return { ok: false, readyAt: at };
      const slot = await pacer.take(key, destination, now, intervalMs, at);
      if (!wait) return slot;
      if (slot.ok) {
        const waitMs = at.getTime() - deps.clock.now().getTime();
        if (waitMs > 0) await sleep(waitMs, wait);
        // Stopping before the slot: the reservation lapses on its own within one interval.
        return wait.aborted ? { ok: false, readyAt: at } : slot;
      }
      if (wait.aborted) return slot;
    }
  }

  /** One claimed row: false when it was handed back untried (its pace did not allow it). */
  async function attempt(claim: ClaimedNotification, wait?: AbortSignal): Promise<boolean> {
    try {
      return await attemptClaimed(claim, wait);
    } catch (error) {
      if (isConnectionError(error)) stranded.add(claim.id);
      throw error;
    }
  }

  async function attemptClaimed(claim: ClaimedNotification, wait?: AbortSignal): Promise<boolean> {
    const loaded = await loadDeliveryInput(deps.db, claim, deps.clock.now());
    const n = loaded.notification;
    const { kind } = parseDestination(n.destination);
    const transport = byKind.get(kind)!;
    const pacing = pacingOf(transport);
    const key = pacing?.key(n.destination);
    const previous = claim.previousStatus === 'sending' ? 'sending' : 'pending';
    if (pacing && key) {
      const slot = await takeSlot(key, n.destination, pacing.minIntervalMs, wait);
      if (!slot.ok) {
        await releaseUntried(deps.db, n.id, previous, slot.readyAt);
        return false;
      }
    }
    // The unit of work starts when the slot is taken: rendering and the outcome use this instant.
    const now = deps.clock.now();
    const input: DeliveryInput = { ...loaded, now };
    const ctx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts };
    try {
      if (previous === 'sending' && transport.findDelivered) {
        const found = await transport.findDelivered(input);
        if (found.kind === 'found') {
          const ended = await markSent(deps.db, n.id, now, { ref: found.ref, ...found.result, recovered: true });
          metrics.deliveries.inc({ kind, result: 'recovered' });
          log.info(ctx, 'notification found already delivered; not sending again');
          if (ended?.noticedAt) await notify({ kind: 'recovered', destination: n.destination, outage: ended, now });
          return true;
        }
        if (found.kind === 'failed') {
          if (found.permanent) {
            log.error({ ...ctx, error: found.error }, 'notification undeliverable: its earlier attempt cannot be checked');
            await markDead(deps.db, n.id, `lookup failed: ${found.error}`);
            metrics.deliveries.inc({ kind, result: 'permanent' });
            return true;
          }
          metrics.deliveries.inc({ kind, result: 'lookup_failed' });
          if (found.retryAfterMs) {
            if (key) await pacer.hold(key, n.destination, new Date(now.getTime() + found.retryAfterMs), now);
            await markUnknown(deps.db, n.id, new Date(now.getTime() + found.retryAfterMs), `lookup failed: ${found.error}`);
          } else await failed(n, `lookup failed: ${found.error}`, 'unknown', now);
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
      await settle(transport, key, input, result, now);
      return true;
    } catch (error) {
      // A bug or a database error mid-delivery: the outcome is unknown, so keep
      // the row `sending` for a lookup first, and let the runner log it.
      const message = error instanceof Error ? error.message : String(error);
      // The database failing is not the destination's fault: look again soon, not after a growing back-off.
      const delay = isConnectionError(error) ? o.baseBackoffMs : backoffMs(n.attempts + 1, o);
      await markUnknown(deps.db, n.id, new Date(now.getTime() + delay), message);
      metrics.deliveries.inc({ kind, result: 'error' });
      throw error;
    }
  }

  async function settle(transport: Transport, key: string | undefined, input: DeliveryInput, result: DeliveryResult, now: Date): Promise<void> {
    const n = input.notification;
    const kind = transport.kind;
    metrics.deliveries.inc({ kind, result: result.kind });
    const ctx = { id: n.id, key: n.idempotencyKey, destination: n.destination, attempts: n.attempts + 1 };
    switch (result.kind) {
      case 'sent': {
        const ended = await markSent(deps.db, n.id, now, { ref: result.ref, ...result.result });
        if (ended?.noticedAt) await notify({ kind: 'recovered', destination: n.destination, outage: ended, now });
        return;
      }
      case 'rate_limited': {
        const until = new Date(now.getTime() + result.retryAfterMs);
        if (key) await pacer.hold(key, n.destination, until, now);
        log.warn({ ...ctx, retryAfterMs: result.retryAfterMs }, 'rate limited; holding this destination');
        await markRetry(deps.db, n.id, until, result.error ?? 'rate limited', false);
        return;
      }
      case 'permanent':
        log.error({ ...ctx, error: result.error }, 'notification undeliverable');
        await markDead(deps.db, n.id, result.error);
        return;
      case 'transient':
      case 'unknown':
        await failed(n, result.error, result.kind, now);
        return;
    }
  }

  /** A transient failure: the destination is held, the row waits with it; past the threshold the platform hears once. */
  async function failed(n: DeliveryInput['notification'], error: string, outcome: 'transient' | 'unknown', now: Date): Promise<void> {
    const { outage, raiseNotice } = await holdDestination(deps.db, { id: n.id, destination: n.destination, error, outcome, now, policy: o });
    log.warn({ id: n.id, destination: shownDestination(n.destination), error, outcome, failures: outage.failures, next: outage.heldUntil }, 'delivery failed; destination held, will retry');
    if (raiseNotice) await notify({ kind: 'outage', destination: n.destination, outage, now });
  }

  async function notify(notice: OutageNotice): Promise<void> {
    const { destination, outage } = notice;
    const ctx = { destination: shownDestination(destination), failingSince: outage.failingSince, failures: outage.failures, lastError: outage.lastError };
    if (notice.kind === 'outage') log.error(ctx, 'destination failing for longer than the notice threshold; its notifications are held and will be delivered in order');
    else log.warn(ctx, 'destination recovered; held notifications are being delivered');
    metrics.deliveries.inc({ kind: parseDestination(destination).kind, result: notice.kind === 'outage' ? 'outage_notice' : 'outage_recovered' });
    // The log line and the counter above are the notice of record; a platform
    // channel that cannot be reached must not turn into a failed delivery.
    await o.onOutage?.(notice).catch((error: unknown) => log.warn({ ...ctx, err: error }, 'could not post the outage notice to the platform channel'));
  }

  return {
    tick,
    pacer,
    busy: () => awake > 0,
    loop: {
      name: 'outbox-sender',
      intervalMs: o.intervalMs,
      // Waiting on the clock with rows in hand needs a way to be told to stop:
      // called without the runner's signal (loops driven by hand), it makes one round.
      tick: (signal) => (signal ? drain(signal) : tick()),
      wakeOn: [NOTIFICATIONS_CHANNEL],
    },
  };
}

/** A transport's pace, if it has one worth keeping (the console sink has none). */
function pacingOf(transport: Transport): Transport['pacing'] {
  return transport.pacing && transport.pacing.minIntervalMs > 0 ? transport.pacing : undefined;
}

/** Waits for every attempt, then fails with the first failure (a rejected one must not leave the others unwatched). */
async function settleAll(attempts: Promise<unknown>[]): Promise<void> {
  const outcomes = await Promise.allSettled(attempts);
  const failure = outcomes.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/**
 * What a transport needs besides the claimed row: its event, and the alert,
 * workflow and tenant as they are now. Three statements: this runs once per message, 50 a
 * second in an alert storm.
 */
export async function loadDeliveryInput(db: Db, claimed: Pick<ClaimedNotification, 'row' | 'queuedBehind'>, now: Date): Promise<DeliveryInput> {
  const notification = claimed.row;
  const found = await db
    .selectFrom('alerts')
    .innerJoin('alertEvents as e', 'e.alertId', 'alerts.id')
    .selectAll('alerts')
    .select(['e.id as eventId', 'e.at as eventAt', 'e.kind as eventKind', 'e.actor as eventActor', 'e.data as eventData', 'e.policyVersion as eventPolicyVersion'])
    .where('alerts.id', '=', notification.alertId)
    .where('e.id', '=', notification.eventId)
    .executeTakeFirstOrThrow();
  const { eventId, eventAt, eventKind, eventActor, eventData, eventPolicyVersion, ...alert } = found;
  const event = { id: eventId, alertId: alert.id, at: eventAt, kind: eventKind, actor: eventActor, data: eventData, policyVersion: eventPolicyVersion };
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { notification, target: parseDestination(notification.destination).target, event, alert, workflow, tenant, queuedBehind: claimed.queuedBehind, now };
}
