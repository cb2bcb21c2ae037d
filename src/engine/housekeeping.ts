import { CronExpressionParser } from 'cron-parser';
import cron, { type ScheduledTask } from 'node-cron';
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { isConnectionError } from '../db/connection-errors.js';
import { metrics } from '../metrics.js';
import { tickFailed, tickSucceeded, type LoopStatus } from './runner.js';

/** A wall-clock job: retention, and later the digest. `run` does the work of one firing and says what it did. */
export interface HousekeepingJob {
  name: string;
  /** node-cron syntax. */
  cron: string;
  timezone?: string;
  /**
   * One pass at a time across replicas: a firing that comes while the job's
   * previous one still runs is skipped (retention). A job with finer claims
   * of its own (the digest's per-tenant fire times, taken over when stale)
   * leaves it off.
   */
  exclusive?: boolean;
  run(now: Date): Promise<Record<string, unknown>>;
}

export type FiringOutcome = { ran: true; result: Record<string, unknown> } | { ran: false; reason: 'claimed_elsewhere' | 'still_running' };

export interface Housekeeping {
  /**
   * One firing of `job` for the scheduled instant `fireAt`: claimed with one
   * insert keyed by (job, fireAt), so of all the replicas whose node-cron
   * fired at that instant exactly one runs it. A firing whose `exclusive` job is still
   * running from an earlier firing (on any replica: a pass longer than the
   * cron's period) is recorded as skipped rather than run beside it: the
   * job's session advisory lock, which a replica that dies mid-job releases
   * with its connection. Also what tests call by hand.
   */
  fire(job: string, fireAt: Date): Promise<FiringOutcome>;
  /** Schedules every job with node-cron (real wall-clock time). */
  start(): void;
  stop(): Promise<void>;
  /**
   * Each job as a loop (/readyz, the loop metrics): its interval is the
   * cron's period, its last tick the last firing this replica handled without
   * an error (ran it, or found it claimed elsewhere), its failures the firings
   * in a row that failed, at the claim (the database away) or in the job.
   */
  statuses(): LoopStatus[];
}

/** The session advisory lock a job holds while it runs (hashed with its name). */
const JOB_LOCK = 'scheduler-bot:housekeeping:';

export function createHousekeeping(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId'>, jobs: HousekeepingJob[]): Housekeeping {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const status = new Map<string, LoopStatus>(jobs.map((j) => [j.name, { name: `housekeeping:${j.name}`, intervalMs: periodMs(j, deps.clock.now()), ticks: 0, failures: 0, dbErrors: 0 }]));
  const tasks: ScheduledTask[] = [];
  const log = deps.logger.child({ loop: 'housekeeping' });

  async function fire(name: string, fireAt: Date): Promise<FiringOutcome> {
    const job = byName.get(name);
    if (!job) throw new Error(`no housekeeping job named ${name}`);
    const s = status.get(name)!;
    const now = deps.clock.now();
    s.ticks++;
    let claimed;
    try {
      claimed = await deps.db
        .insertInto('housekeepingFirings')
        .values({ job: name, fireAt, replica: deps.replicaId, startedAt: now })
        .onConflict((oc) => oc.columns(['job', 'fireAt']).doNothing())
        .returning('job')
        .executeTakeFirst();
    } catch (error) {
      tickFailed(s, error, deps.clock.now());
      if (isConnectionError(error)) log.warn({ job: name, fireAt, error: s.lastError, failures: s.failures }, 'housekeeping firing could not be claimed: database unavailable');
      else log.error({ job: name, fireAt, err: error, failures: s.failures }, 'housekeeping firing could not be claimed');
      throw error;
    }
    if (!claimed) {
      tickSucceeded(s, deps.clock.now());
      log.debug({ job: name, fireAt }, 'housekeeping firing claimed by another replica');
      return { ran: false, reason: 'claimed_elsewhere' };
    }
    const run = () => runClaimed(job, fireAt, now, s);
    return job.exclusive ? exclusively({ ...deps, log }, name, fireAt, s, run) : run();
  }

  async function runClaimed(job: HousekeepingJob, fireAt: Date, now: Date, s: LoopStatus): Promise<FiringOutcome> {
    const name = job.name;
    const started = performance.now();
    try {
      const result = await job.run(now);
      await sql`update housekeeping_firings set finished_at = ${deps.clock.now()}, result = ${JSON.stringify(result)} where job = ${name} and fire_at = ${fireAt}`.execute(deps.db);
      tickSucceeded(s, deps.clock.now());
      // The digest job fires every minute and mostly finds nothing due: a line a minute at info was noise, 1,440 a day per replica.
      if (Object.keys(result).length === 0) log.debug({ job: name, fireAt }, 'housekeeping job done: nothing to do');
      else log.info({ job: name, fireAt, ...result }, 'housekeeping job done');
      return { ran: true, result };
    } catch (error) {
      tickFailed(s, error, deps.clock.now());
      const message = s.lastError!;
      log.error({ job: name, fireAt, err: error, failures: s.failures }, 'housekeeping job failed');
      await sql`update housekeeping_firings set finished_at = ${deps.clock.now()}, error = ${message} where job = ${name} and fire_at = ${fireAt}`
        .execute(deps.db)
        .catch((e: unknown) => log.warn({ job: name, fireAt, error: e instanceof Error ? e.message : String(e) }, 'could not record the housekeeping failure'));
      return { ran: true, result: { error: message } };
    } finally {
      s.lastDurationMs = performance.now() - started;
      metrics.loopTickSeconds.observe({ loop: s.name }, s.lastDurationMs / 1000);
    }
  }

  return {
    fire,
    start() {
      for (const job of jobs) tasks.push(scheduleJob(job, fire));
    },
    async stop() {
      await Promise.all(tasks.map((t) => t.destroy()));
      tasks.length = 0;
    },
    statuses: () => [...status.values()],
  };
}

/** node-cron's task for `job`: each firing at the scheduled instant, to the second, which is what replicas agree on (their clocks differ by milliseconds). */
function scheduleJob(job: HousekeepingJob, fire: Housekeeping['fire']): ScheduledTask {
  return cron.schedule(
    job.cron,
    async (ctx) => {
      // A claim that failed is counted and logged by `fire`.
      await fire(job.name, new Date(Math.floor(ctx.date.getTime() / 1000) * 1000)).catch(() => {});
    },
    { name: `housekeeping:${job.name}`, noOverlap: true, ...(job.timezone ? { timezone: job.timezone } : {}) },
  );
}

type Log = Deps['logger'];

/**
 * Runs a claimed firing of an exclusive job under the job's session advisory
 * lock; when another replica (or this one) still holds it, the firing is
 * recorded as skipped instead. A replica that dies mid-job releases the lock
 * with its connection.
 */
async function exclusively(deps: Pick<Deps, 'db' | 'clock'> & { log: Log }, name: string, fireAt: Date, s: LoopStatus, run: () => Promise<FiringOutcome>): Promise<FiringOutcome> {
  const { db, clock, log } = deps;
  try {
    return await db.connection().execute(async (conn) => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtext(${JOB_LOCK + name})) as locked`.execute(conn);
      if (rows[0]?.locked) {
        try {
          return await run();
        } finally {
          await sql`select pg_advisory_unlock(hashtext(${JOB_LOCK + name}))`.execute(conn).catch(() => {});
        }
      }
      const result = { skipped: 'the previous firing is still running' };
      await sql`update housekeeping_firings set finished_at = ${clock.now()}, result = ${JSON.stringify(result)} where job = ${name} and fire_at = ${fireAt}`.execute(db);
      tickSucceeded(s, clock.now());
      log.warn({ job: name, fireAt }, 'housekeeping firing skipped: the previous firing of the job is still running');
      return { ran: false, reason: 'still_running' } as const;
    });
  } catch (error) {
    // Only the lock or the skip's record get here (the job's own errors are recorded by `run`).
    tickFailed(s, error, clock.now());
    log.warn({ job: name, fireAt, error: s.lastError, failures: s.failures }, 'housekeeping firing could not take its job lock');
    throw error;
  }
}

/** The longest gap between two of the next few firings: a replica that missed two of them is not ready. */
function periodMs(job: HousekeepingJob, now: Date): number {
  const it = CronExpressionParser.parse(job.cron, { currentDate: now, ...(job.timezone ? { tz: job.timezone } : {}) });
  let previous = it.next().getTime();
  let longest = 0;
  for (let i = 0; i < 4; i++) {
    const next = it.next().getTime();
    longest = Math.max(longest, next - previous);
    previous = next;
  }
  return longest;
}
