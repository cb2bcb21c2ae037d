import type { Deps } from '../deps.js';
import type { Logger } from '../log.js';
import { claimNotifications, type ClaimedNotification } from './claim-notifications.js';
import { Pacer } from './pacer.js';
import { releaseLeases } from './settle-notification.js';
import { CREDENTIAL_OUTAGE_POLICY, type Outage } from '../domain/destination-outage.js';
import type { Transport } from './transport.js';

export interface SenderOptions {
  /** Rows claimed per look (at most one per destination). */
  batch?: number;
  leaseMs?: number;
  /** First hold of a failing destination; doubles per consecutive failure up to maxBackoffMs, then stays there: transient failures are retried forever. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** A destination failing for longer than this raises one notice (log, metric, `onOutage`), and another when it recovers. */
  noticeAfterMs?: number;
  /**
   * Refused credentials (src/domain/destination-outage.ts): the first probe
   * after this, doubling up to the max. Told at once, whatever `noticeAfterMs`.
   */
  credentialBaseBackoffMs?: number;
  credentialMaxBackoffMs?: number;
  /** Tells the platform (its channel) about a long outage. */
  onOutage?: (notice: OutageNotice) => Promise<void>;
  intervalMs?: number;
  /** While deliveries are under way, how often the loop looks for destinations that got work (a wake-up makes it look at once; this is the fallback). */
  lookMs?: number;
  /** A claimed row waits in process for its pacing slot at most this long; a longer wait (a rate limit) hands it back, due at the slot. */
  holdMs?: number;
}

export const SENDER_DEFAULTS = {
  batch: 50,
  leaseMs: 60_000,
  baseBackoffMs: 1000,
  maxBackoffMs: 10 * 60_000,
  noticeAfterMs: 15 * 60_000,
  credentialBaseBackoffMs: CREDENTIAL_OUTAGE_POLICY.baseBackoffMs,
  credentialMaxBackoffMs: CREDENTIAL_OUTAGE_POLICY.maxBackoffMs,
  intervalMs: 250,
  lookMs: 100,
  holdMs: 5_000,
};

export type SenderSettings = typeof SENDER_DEFAULTS & Pick<SenderOptions, 'onOutage'>;

/**
 * A destination has been failing longer than `noticeAfterMs` (`outage`), has
 * just recovered from such an outage (`recovered`), or ended it with a
 * permanent refusal (`refused`: reachable again, but what it answered goes
 * dead; `outage.lastError` is that answer). See `outageEndNotice`.
 */
export interface OutageNotice {
  /** dead: a destination refusing notifications for good (not an outage: nothing is held), told once a day at most. */
  kind: 'outage' | 'recovered' | 'refused' | 'dead';
  destination: string;
  outage: Outage;
  now: Date;
}

export function backoffMs(attempts: number, o: Pick<SenderSettings, 'baseBackoffMs' | 'maxBackoffMs'>): number {
  return Math.min(o.maxBackoffMs, o.baseBackoffMs * 2 ** Math.max(0, attempts - 1));
}

/** What every part of one outbox sender shares: its dependencies, settings, transports, pace and wakefulness. */
export interface SenderContext {
  deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId'>;
  o: SenderSettings;
  byKind: Map<string, Transport>;
  kinds: string[];
  pacer: Pacer;
  log: Logger;
  /** Loop work not asleep on the clock (the drain and its pipelines). */
  awake: { count: number };
  /**
   * Rows this sender claimed whose outcome it could not write back because
   * the database failed under it. Left alone they would wait out their whole
   * lease (a minute) after the database is back; instead their leases are
   * dropped at the next look, still `sending`, so the next claimer checks
   * for an earlier delivery before sending again.
   */
  stranded: Set<number>;
  /** Ends the running drain's pause before its next look (a wake-up: rows were just written); nothing when no drain runs. */
  lookNow: () => void;
  /**
   * Credential scopes (`slack:*`) this sender has looked at since it
   * started. The first look probes a held scope at once, whatever its
   * back-off: a replica (re)started, perhaps with a new token, finds out now.
   */
  probed: Set<string>;
  /** Each destination's tenant this sender last delivered to it: the next row there is the next tenant's (`turns` in claim-notifications.ts). */
  turns: Map<string, string>;
}

export function createSenderContext(deps: SenderContext['deps'], transports: Transport[], options: SenderOptions): SenderContext {
  const byKind = new Map(transports.map((t) => [t.kind, t]));
  return {
    deps,
    o: { ...SENDER_DEFAULTS, ...options },
    byKind,
    kinds: [...byKind.keys()],
    pacer: new Pacer(deps.db),
    log: deps.logger.child({ loop: 'outbox-sender' }),
    awake: { count: 0 },
    stranded: new Set(),
    lookNow: () => {},
    probed: new Set(),
    turns: new Map(),
  };
}

/** Hands back the leases of rows stranded by a database failure (see `SenderContext.stranded`). */
export async function handBackStranded(ctx: SenderContext): Promise<void> {
  if (ctx.stranded.size === 0) return;
  const ids = [...ctx.stranded];
  await releaseLeases(ctx.deps.db, ids, ctx.deps.replicaId);
  for (const id of ids) ctx.stranded.delete(id);
}

/** Claims due rows of this sender's kinds (at most one per destination), skipping `exclude`, or only `only`. */
export function claimDue(ctx: SenderContext, now: Date, limit: number, exclude: string[], only?: string[]): Promise<ClaimedNotification[]> {
  return claimNotifications(ctx.deps.db, { now, owner: ctx.deps.replicaId, leaseMs: ctx.o.leaseMs, limit, kinds: ctx.kinds, exclude, turns: ctx.turns, ...(only ? { only } : {}) });
}

/** Sleeps on the sender's clock, counted as not awake meanwhile. */
export async function sleepOnClock(ctx: SenderContext, ms: number, signal: AbortSignal): Promise<void> {
  ctx.awake.count--;
  try {
    // A signal of its own per sleep: a clock's abort listener then never piles up on the drain's long-lived one.
    await ctx.deps.clock.sleep(ms, AbortSignal.any([signal]));
  } finally {
    ctx.awake.count++;
  }
}

/** A transport's pace, if it has one worth keeping (the console sink has none). */
export function pacingOf(transport: Transport): Transport['pacing'] {
  return transport.pacing && transport.pacing.minIntervalMs > 0 ? transport.pacing : undefined;
}
