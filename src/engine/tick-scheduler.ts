import { sql, type Transaction } from 'kysely';
import type { Database, Run, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { fireTimesBetween, latestFireAtOrBefore, nextFireAfter } from '../domain/schedule.js';
import { createProfileCache } from '../ledger/profiles.js';
import type { LoopSpec } from './runner.js';
import { launchRun, newRunRow, RUN_LEASE_MS } from '../ledger/runs.js';

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
/** After a long outage only this many older ticks are written as skipped; the rest are counted in the log. */
const MAX_SKIPPED_ROWS = 1_000;

const SKIPPED_NOTE = 'not fired: the scheduler was not running at this tick; only the latest due tick runs after a gap';

/** Profiles by (hour, cron, zone, overrides): the same few recur across a batch and across batches. */
const profileOf = createProfileCache();

type ClaimedWorkflow = Workflow & { tenantName: string };

interface Fire {
  workflow: ClaimedWorkflow;
  /** The tick that fires now: the latest due one. */
  tick: Date;
  /** Older due ticks, recorded as skipped. */
  skipped: Date[];
  nextTickAt: Date;
  timeoutSeconds: number;
}

/**
 * Fires every due tick of managed workflows exactly once across replicas, a
 * batch per transaction: one statement claims up to BATCH due workflows with
 * FOR UPDATE SKIP LOCKED (another scheduler skips them and takes the next
 * ones), one inserts their ticks' original rows (the unique index on
 * (workflow, tick) is the second guard: a row already there is not inserted,
 * so not launched), one inserts skipped rows for older due ticks, one
 * advances next_tick_at. Launches happen after commit, concurrently and
 * bounded, while the next batch is claimed; when a batch comes back full, a
 * second transaction claims alongside the first. A replica that dies between
 * commit and launch leaves leased `running` rows that the freshness detector
 * fails as "worker lost".
 */
export async function fireDueTicks(deps: Deps): Promise<boolean> {
  const launches = new LaunchQueue(deps, LAUNCH_CONCURRENCY);
  const claimers: Promise<number>[] = [];
  let batchesLeft = BATCHES_PER_TICK;
  const claimBatches = async (): Promise<number> => {
    let fired = 0;
    while (batchesLeft > 0) {
      batchesLeft--;
      const now = deps.clock.now();
      const batch = await deps.db.transaction().execute((trx) => fireBatch(trx, deps, now));
      fired += batch.claimed;
      if (batch.skipped > 0) deps.logger.info({ workflows: batch.skippedWorkflows, skipped: batch.skipped }, 'ticks due while nothing was running recorded as skipped');
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

interface Launch {
  run: Run;
  fire: Fire;
}

interface FiredBatch {
  claimed: number;
  skipped: number;
  skippedWorkflows: string[];
  launches: Launch[];
}

async function fireBatch(trx: Transaction<Database>, deps: Deps, now: Date): Promise<FiredBatch> {
  const claimed = await claimDueWorkflows(trx, now, BATCH);
  if (claimed.length === 0) return { claimed: 0, skipped: 0, skippedWorkflows: [], launches: [] };
  const fires = planFires(claimed, now);

  const launches = await insertOriginalRuns(trx, fires, deps.replicaId, now);
  const skipped = fires.filter((f) => f.skipped.length > 0);
  if (skipped.length > 0) await insertSkippedRuns(trx, skipped, now);
  await advanceNextTicks(trx, fires);

  return {
    claimed: claimed.length,
    skipped: skipped.reduce((n, f) => n + f.skipped.length, 0),
    skippedWorkflows: skipped.slice(0, 20).map((f) => `${f.workflow.tenantId}/${f.workflow.name}`),
    launches,
  };
}

function claimDueWorkflows(trx: Transaction<Database>, now: Date, limit: number): Promise<ClaimedWorkflow[]> {
  return trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .selectAll('workflows')
    .select('tenants.name as tenantName')
    .where('workflows.enabled', '=', true)
    .where('workflows.paused', '=', false)
    .where('workflows.mode', '=', 'managed')
    .where('workflows.nextTickAt', '<=', now)
    .where('tenants.enabled', '=', true)
    .orderBy('workflows.nextTickAt')
    .limit(limit)
    .forUpdate('workflows')
    .skipLocked()
    .execute();
}

/**
 * What each claimed workflow fires. Only the latest due tick fires; older
 * ones fell while no scheduler ran (or while the workflow was paused) and are
 * recorded as skipped, not failed. Cron arithmetic is the main CPU cost at a
 * busy minute boundary, so it is done once per distinct (cron, zone, stored
 * next tick), not per workflow: every `* * * * *` workflow due at 12:00
 * shares one. In the usual case the tick after the stored one is still to
 * come, and that single fire time gives everything: the stored tick fires,
 * nothing was skipped, and it is the next tick.
 */
function planFires(claimed: ClaimedWorkflow[], now: Date): Fire[] {
  const plans = new Map<string, { tick: Date; skipped: Date[]; nextTickAt: Date }>();
  return claimed.map((workflow) => {
    const scheduled = workflow.nextTickAt!;
    const key = scheduleKey(workflow.cron, workflow.timezone, scheduled);
    let plan = plans.get(key);
    if (!plan) {
      const following = fireAfterScheduled(workflow.cron, workflow.timezone, scheduled, key);
      plan = following > now ? { tick: scheduled, skipped: [], nextTickAt: following } : planAfterGap(workflow.cron, workflow.timezone, scheduled, now);
      plans.set(key, plan);
    }
    return { workflow, ...plan, timeoutSeconds: profileOf(workflow, now).timeoutSeconds };
  });
}

/** Ticks were missed: the latest due one fires, the ones between the stored tick and it are skipped. */
function planAfterGap(cron: string, tz: string, scheduled: Date, now: Date) {
  const latestFire = latestFireAtOrBefore(cron, tz, now);
  const tick = latestFire && latestFire > scheduled ? latestFire : scheduled;
  const skipped = [scheduled, ...fireTimesBetween(cron, tz, scheduled, new Date(tick.getTime() - 1), MAX_SKIPPED_ROWS + 1)]
    .filter((s) => s < tick)
    .slice(-MAX_SKIPPED_ROWS);
  // Strictly after now: `tick` is at or before now, so this is the first tick still to come.
  return { tick, skipped, nextTickAt: nextFireAfter(cron, tz, now) };
}

const scheduleKey = (cron: string, tz: string, scheduled: Date) => `${tz}\u0000${scheduled.getTime()}\u0000${cron}`;

/**
 * The fire time after a stored next tick depends on nothing else, so it is
 * kept across batches and ticks (and computed ahead, see warmUpcomingTicks).
 */
const followingFires = new Map<string, Date>();
const FOLLOWING_FIRES_MAX = 50_000;

function fireAfterScheduled(cron: string, tz: string, scheduled: Date, key = scheduleKey(cron, tz, scheduled)): Date {
  let following = followingFires.get(key);
  if (!following) {
    following = nextFireAfter(cron, tz, scheduled);
    if (followingFires.size >= FOLLOWING_FIRES_MAX) followingFires.clear();
    followingFires.set(key, following);
  }
  return following;
}

/**
 * The fired ticks' original rows, `running` and leased to this replica. A
 * tick that already has its original row (the unique index) is skipped by
 * ON CONFLICT and absent from the result: nothing to launch for it. Only ids
 * come back: the rest of each row is what was just written, and parsing
 * thousands of whole rows was a visible share of a crowded boundary's CPU.
 */
async function insertOriginalRuns(trx: Transaction<Database>, fires: Fire[], replicaId: string, now: Date): Promise<Launch[]> {
  const leaseExpiresAt = new Date(now.getTime() + RUN_LEASE_MS);
  const deadlines = fires.map((f) => new Date(now.getTime() + f.timeoutSeconds * 1000));
  const { rows } = await sql<{ id: number; workflowId: number; createdAt: Date }>`
    insert into runs (workflow_id, tick, trigger, attempt, status, started_at, deadline_at, lease_owner, lease_expires_at)
    select v.workflow_id, v.tick, 'schedule', 1, 'running', ${now}, v.deadline_at, ${replicaId}, ${leaseExpiresAt}
    from unnest(
      ${fires.map((f) => f.workflow.id)}::int4[],
      ${fires.map((f) => f.tick.toISOString())}::timestamptz[],
      ${deadlines.map((d) => d.toISOString())}::timestamptz[]
    ) as v(workflow_id, tick, deadline_at)
    on conflict (workflow_id, tick) where original_run_id is null and tick is not null do nothing
    returning id, workflow_id, created_at
  `.execute(trx);
  const index = new Map(fires.map((f, i) => [f.workflow.id, i]));
  // In id order: launches start in the order the ledger shows.
  return rows
    .sort((a, b) => a.id - b.id)
    .map((r) => {
      const i = index.get(r.workflowId)!;
      const fire = fires[i]!;
      const run: Run = {
        id: r.id,
        ...newRunRow({
          workflowId: r.workflowId,
          tick: fire.tick,
          trigger: 'schedule',
          status: 'running',
          startedAt: now,
          deadlineAt: deadlines[i]!,
          leaseOwner: replicaId,
          leaseExpiresAt,
        }),
        createdAt: r.createdAt,
      };
      return { run, fire };
    });
}

/** Skipped rows are neither successes nor failures: born processed, so the poller never sees them. */
async function insertSkippedRuns(trx: Transaction<Database>, fires: Fire[], now: Date): Promise<void> {
  const workflowIds = fires.flatMap((f) => f.skipped.map(() => f.workflow.id));
  const ticks = fires.flatMap((f) => f.skipped.map((s) => s.toISOString()));
  await sql`
    insert into runs (workflow_id, tick, trigger, attempt, status, finished_at, outcome_note, processed_at)
    select v.workflow_id, v.tick, 'schedule', 1, 'skipped', ${now}, ${SKIPPED_NOTE}, ${now}
    from unnest(${workflowIds}::int4[], ${ticks}::timestamptz[]) as v(workflow_id, tick)
    on conflict (workflow_id, tick) where original_run_id is null and tick is not null do nothing
  `.execute(trx);
}

async function advanceNextTicks(trx: Transaction<Database>, fires: Fire[]): Promise<void> {
  const ids = fires.map((f) => f.workflow.id);
  // `w.id = any(…)` lets the planner find the rows by primary key; joined to unnest alone it
  // hashes the whole table (a sequential scan of 100,000 workflows per batch).
  await sql`
    update workflows w set next_tick_at = v.next_tick_at
    from unnest(${ids}::int4[], ${fires.map((f) => f.nextTickAt.toISOString())}::timestamptz[]) as v(id, next_tick_at)
    where w.id = v.id and w.id = any(${ids}::int4[])
  `.execute(trx);
}

/**
 * Launches committed runs at most `limit` at a time, started as soon as they
 * are added, so the next batch's claim does not wait for them. drain() waits
 * for all and hands back the first failure for the tick to throw, so the
 * runner logs it with the loop's context (launchRun already fails a run whose
 * launcher refuses; what reaches here is the database failing under it, and
 * the run's lease then runs out and the freshness detector fails it).
 */
class LaunchQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly settled: Promise<void>[] = [];
  private active = 0;
  private firstFailure: { error: unknown } | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly limit: number,
  ) {}

  add(run: Run, fire: Fire): void {
    const { tenantName, ...workflow } = fire.workflow;
    const tenant = { id: workflow.tenantId, name: tenantName };
    const workflowNow = { ...workflow, nextTickAt: fire.nextTickAt };
    let done!: () => void;
    this.settled.push(new Promise<void>((resolve) => (done = resolve)));
    this.waiting.push(async () => {
      try {
        await launchRun(this.deps, run, workflowNow, tenant, fire.timeoutSeconds);
      } catch (error) {
        this.deps.logger.error({ err: error, runId: run.id, workflowId: workflow.id }, 'scheduled launch failed');
        this.firstFailure ??= { error };
      } finally {
        done();
      }
    });
    this.pump();
  }

  /** Waits for every launch; the first failure, if any, for the caller to throw. */
  async drain(): Promise<{ error: unknown } | undefined> {
    await Promise.all(this.settled);
    return this.firstFailure;
  }

  private pump(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      this.active++;
      void next().finally(() => {
        this.active--;
        this.pump();
      });
    }
  }
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
    intervalMs: deps.config.TICK_INTERVAL_SECONDS * 1000,
    tick: () => fireDueTicks(deps),
  };
}
