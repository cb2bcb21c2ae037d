import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { LaunchQueue, type Launch } from './launch-queue.js';
import { UnconfirmedLaunches } from './unconfirmed-launches.js';
import type { LoopSpec } from './runner.js';
import { advanceNextTicks, claimDueWorkflows, insertOriginalRuns, insertUnfiredRuns, runsStillRunning } from './tick-claim.js';
import { sql } from 'kysely';
import { RUNS_FINISHED_CHANNEL } from '../ledger/runs.js';
import { overlapDecision } from '../domain/overlap.js';
import { fireAfterScheduled, planFires, profileOf, type Fire, type Firing } from './tick-plan.js';

/**
 * Workflows claimed per transaction. Every statement of a batch is one round
 * trip whatever its size (arrays go in as unnest parameters, so no limit on
 * bind parameters applies); a larger batch holds more row locks for longer,
 * which only other schedulers wait on (SKIP LOCKED: they never wait).
 */
const BATCH = 1_000;
/** Batches per loop tick while they come back full; then the runner gets a say (it calls again at once). */
const BATCHES_PER_TICK = 25;
/** Transactions claiming at once when batches come back full. */
const CLAIMERS = 2;
/** Launches in flight at once: a spawn or an HTTP request each, plus a lease write. */
const LAUNCH_CONCURRENCY = 32;

/**
 * Fires every due tick of managed workflows exactly once across replicas, a
 * batch per transaction: one statement claims up to BATCH due workflows with
 * FOR UPDATE SKIP LOCKED (another scheduler skips them and takes the next
 * ones), one inserts their ticks' original rows (the unique index on
 * (workflow, tick) is the second guard: a row already there is not inserted,
 * so not launched), one inserts the due ticks not fired (skipped, or missed
 * past their catch-up window: src/domain/catch-up.ts), one advances
 * next_tick_at. Launches happen after commit, concurrently and
 * bounded, while the next batch is claimed; when a batch comes back full, a
 * second transaction claims alongside the first. A replica that dies between
 * commit and launch leaves leased `running` rows that the freshness detector
 * fails as "worker lost".
 */
export async function fireDueTicks(deps: Deps): Promise<boolean> {
  const launches = new LaunchQueue(deps, LAUNCH_CONCURRENCY);
  // Ticks of a batch whose COMMIT went unanswered, found committed: launched now, not failed as "worker lost" later.
  for (const { run, fire } of await unconfirmed.confirmed(deps)) launches.add(run, fire);
  const claimers: Promise<number>[] = [];
  let batchesLeft = BATCHES_PER_TICK;
  const claimBatches = async (): Promise<number> => {
    let fired = 0;
    while (batchesLeft > 0) {
      batchesLeft--;
      const now = deps.clock.now();
      const batch = await unconfirmed.commit(deps.replicaId, (decided) =>
        deps.db.transaction().execute(async (trx) => {
          const fired = await fireBatch(trx, deps, now);
          decided(fired.launches);
          return fired;
        }),
      );
      fired += batch.claimed;
      if (batch.unfired > 0) deps.logger.warn({ workflows: batch.unfiredWorkflows, skipped: batch.skipped, missed: batch.missed }, 'ticks not fired in time recorded as skipped (a late run stands for them) or missed (past their catch-up window)');
      for (const { run, fire } of batch.launches) launches.add(run, fire);
      if (batch.claimed < BATCH) break;
      // A full batch means a crowded boundary: a second transaction claims alongside (SKIP LOCKED keeps them
      // apart as it keeps replicas apart), so the database works on two batches at once.
      if (claimers.length < CLAIMERS) claimers.push(claimBatches());
    }
    return fired;
  };
  claimers.push(claimBatches());

  let found = false;
  let failure: { error: unknown } | undefined;
  // The list grows while it is awaited.
  for (let i = 0; i < claimers.length; i++) {
    try {
      if ((await claimers[i]!) > 0) found = true;
    } catch (error) {
      failure ??= { error };
    }
  }
  // Committed runs are launched even when a batch fails; the batch's error is the one reported.
  failure ??= await launches.drain();
  if (failure) throw failure.error;
  if (found) return true;
  return sleepUntilNextDue(deps);
}

/** This process's launches whose commit went unanswered (src/engine/unconfirmed-launches.ts). */
const unconfirmed = new UnconfirmedLaunches<Launch>();

interface FiredBatch {
  claimed: number;
  unfired: number;
  skipped: number;
  missed: number;
  unfiredWorkflows: string[];
  launches: Launch[];
}

async function fireBatch(trx: Transaction<Database>, deps: Deps, now: Date): Promise<FiredBatch> {
  const claimed = await claimDueWorkflows(trx, now, BATCH);
  if (claimed.length === 0) return { claimed: 0, unfired: 0, skipped: 0, missed: 0, unfiredWorkflows: [], launches: [] };
  const fires = planFires(claimed, now);
  const overlap = await decideOverlaps(trx, fires.filter((f): f is Firing => f.tick !== null));

  const launches = await insertOriginalRuns(trx, overlap.firing, deps.replicaId, now, overlap.notes);
  const unfired = fires.filter((f) => f.skipped.length > 0 || f.missed.length > 0);
  if (unfired.length > 0 || overlap.yielded.length > 0) {
    // Missed ticks are failures to evaluate: the pollers are woken as the freshness detector wakes them.
    if (await insertUnfiredRuns(trx, unfired, now, overlap.yielded)) await sql`select pg_notify(${RUNS_FINISHED_CHANNEL}, 'missed')`.execute(trx);
  }
  await advanceNextTicks(trx, fires);
  if (overlap.yielded.length > 0 || overlap.notes.some(Boolean)) {
    deps.logger.info(
      { fired: overlap.firing.flatMap((f, i) => (overlap.notes[i] ? [`${f.workflow.tenantId}/${f.workflow.name}: ${overlap.notes[i]}`] : [])).slice(0, 20), notFired: overlap.yielded.slice(0, 20).map((y) => `${y.fire.workflow.tenantId}/${y.fire.workflow.name}: ${y.note}`) },
      'ticks fired late or while a run of their workflow was still running, or not fired for one',
    );
  }

  return {
    claimed: claimed.length,
    unfired: unfired.length,
    skipped: unfired.reduce((n, f) => n + f.skipped.length, 0),
    missed: unfired.reduce((n, f) => n + f.missed.length, 0),
    unfiredWorkflows: unfired.slice(0, 20).map((f) => `${f.workflow.tenantId}/${f.workflow.name}`),
    launches,
  };
}

/**
 * Which fires go ahead beside a run still running (with a note saying so)
 * and which yield to it (overlap: skip), decided by `overlapDecision`.
 */
async function decideOverlaps(trx: Transaction<Database>, fires: Firing[]) {
  const running = await runsStillRunning(trx, fires.map((f) => f.workflow.id));
  const firing: Firing[] = [];
  const notes: (string | null)[] = [];
  const yielded: { fire: Firing; note: string }[] = [];
  for (const fire of fires) {
    const decision = overlapDecision(fire.overlap, running.get(fire.workflow.id));
    if (decision.fire) {
      firing.push(fire);
      // A late fire says how late; one beside a run still running says which (both when both).
      notes.push([fire.lateNote, decision.note].filter(Boolean).join('; ') || null);
    } else yielded.push({ fire, note: decision.note });
  }
  return { firing, notes, yielded };
}

/**
 * When the next tick of any managed workflow falls inside the loop interval,
 * wait for exactly that moment instead of up to a whole interval, so a tick
 * fires on its second rather than within one. A few seconds ahead, the idle
 * loop also does the cron arithmetic those workflows will need (once per
 * upcoming tick), so it is off the tick's critical path.
 */
async function sleepUntilNextDue(deps: Deps): Promise<boolean> {
  const now = deps.clock.now();
  const intervalMs = deps.config.TICK_INTERVAL_SECONDS * 1000;
  const next = await deps.db
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select((eb) => eb.fn.min('workflows.nextTickAt').as('at'))
    .where('workflows.enabled', '=', true)
    .where('workflows.paused', '=', false)
    .where('workflows.mode', '=', 'managed')
    .where('tenants.enabled', '=', true)
    .executeTakeFirst();
  const at = next?.at ? new Date(next.at) : undefined;
  if (!at) return false;
  const wait = at.getTime() - now.getTime();
  if (wait <= 0) return false;
  if (wait < Math.max(WARM_AHEAD_MS, intervalMs) && warmedFor.get(deps) !== at.getTime()) {
    await warmUpcomingTicks(deps, at);
    warmedFor.set(deps, at.getTime());
  }
  if (wait >= intervalMs) return false;
  // Measured again: the arithmetic above may have used part of the wait.
  const left = at.getTime() - deps.clock.now().getTime();
  if (left > 0) await deps.clock.sleep(left);
  return true;
}

/** How far ahead of a tick its workflows' fire times and profiles are computed. */
const WARM_AHEAD_MS = 10_000;
/** The upcoming tick each replica last computed ahead for. */
const warmedFor = new WeakMap<Deps, number>();
/** Distinct schedules looked at ahead of a tick; beyond this the batch computes the rest itself. */
const WARM_SCHEDULES_MAX = 500;

/**
 * Computes, for the schedules of the workflows due at `at`, the fire time
 * after it and the cadence profile, into the caches the batch reads. Only a
 * cache is filled: the answers are the same whenever they are computed.
 */
async function warmUpcomingTicks(deps: Deps, at: Date): Promise<void> {
  const schedules = await deps.db
    .selectFrom('workflows')
    .select(['cron', 'timezone', 'policy'])
    .distinct()
    .where('enabled', '=', true)
    .where('paused', '=', false)
    .where('mode', '=', 'managed')
    .where('nextTickAt', '=', at)
    .limit(WARM_SCHEDULES_MAX)
    .execute();
  for (const s of schedules) {
    fireAfterScheduled(s.cron, s.timezone, at);
    profileOf(s, at);
  }
}

export function tickSchedulerLoop(deps: Deps): LoopSpec {
  return {
    name: 'tick-scheduler',
    step: 'tick-scheduler',
    intervalMs: deps.config.TICK_INTERVAL_SECONDS * 1000,
    tick: () => fireDueTicks(deps),
  };
}
