import type { Clock } from '../clock.js';
import { databaseRefusalOf, isDatabaseFault } from '../db/connection-errors.js';
import { refusalText } from '../domain/database-refusal.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import { FailureStreak } from './failure-streak.js';
import type { EngineStep } from './steps.js';

/**
 * One unit of work; resolves true when it found work (the runner then goes
 * again at once), false when idle (the runner sleeps its interval or until woken).
 * `signal` aborts when the loop is stopping: a tick that can run for long
 * (the outbox sender's paced pipelines) winds down on it, and calls
 * `progress` after each step that reached the database, so readiness and
 * the seconds-since-tick metric see a loop working through a backlog
 * rather than one stuck since its last failure.
 */
export type LoopTick = (signal?: AbortSignal, progress?: () => void) => Promise<boolean>;

export interface LoopSpec {
  name: string;
  /** Where the loop sits in the engine's order (src/engine/steps.ts); absent for loops outside the engine. */
  step?: EngineStep;
  intervalMs: number;
  tick: LoopTick;
  /** Postgres NOTIFY channels that wake this loop early (the interval stays the fallback). */
  wakeOn?: string[];
  /**
   * Told of every wake-up, also while a tick runs: a tick that can take new
   * work as it goes (the outbox drain, which may deliver for minutes) looks
   * for it at once instead of after its own pause or at its end.
   */
  onWake?: () => void;
}

export interface LoopStatus {
  name: string;
  intervalMs: number;
  /** When the last tick finished without an error, or a long tick last made progress. */
  lastTickAt?: Date;
  lastErrorAt?: Date;
  lastError?: string;
  /** When the tick under way began; undefined between ticks (src/domain/loop-liveness.ts). */
  tickStartedAt?: Date;
  /** Ticks in a row that threw; 0 once one succeeds. */
  failures: number;
  /** Of those, the ones that were the database failing (terminated, refused, timed out, read-only, full). */
  dbErrors: number;
  ticks: number;
  lastDurationMs?: number;
}

export interface RunningLoop {
  readonly status: LoopStatus;
  /** Run the next tick now instead of waiting out the interval (LISTEN/NOTIFY wake-ups). */
  wake(): void;
  /** Resolves when the loop has stopped after its signal aborted. */
  done: Promise<void>;
}

/**
 * The longest a loop waits after a failed tick. Low on purpose: the usual
 * failure is the database going away for a moment (a terminated connection,
 * a restart), and every loop must be working again within seconds of it
 * answering. A tick that fails costs one query's worth of load, so retrying
 * every few seconds through a long outage is cheap.
 */
export const MAX_BACKOFF_MS = 2_000;
const MIN_BACKOFF_MS = 100;

/** A tick (or a housekeeping firing) that failed: counted on its status and in the metrics; true when it was the database. */
export function tickFailed(status: LoopStatus, error: unknown, now: Date): boolean {
  status.failures++;
  status.lastErrorAt = now;
  status.lastError = error instanceof Error ? error.message : String(error);
  metrics.loopErrors.inc({ loop: status.name });
  const database = isDatabaseFault(error);
  if (database) {
    status.dbErrors++;
    metrics.loopDbErrors.inc({ loop: status.name });
  }
  return database;
}

/** A tick (or a firing) that went through: the failure streak ends. */
export function tickSucceeded(status: LoopStatus, now: Date): void {
  status.failures = 0;
  status.dbErrors = 0;
  status.lastTickAt = now;
}

/**
 * The wait after `failures` failed ticks in a row: doubling from the loop's
 * interval (at least 100 ms), capped at MAX_BACKOFF_MS, with "equal jitter"
 * (half fixed, half random) so that the loops of several replicas do not all
 * come back in the same instant. `random` is injectable for tests.
 */
export function backoffAfterFailure(intervalMs: number, failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, intervalMs) * 2 ** Math.min(failures - 1, 16));
  return Math.round(base / 2 + (base / 2) * random());
}

/**
 * Runs `tick` until `signal` aborts: again at once while it finds work, after
 * the interval when idle, and after a short jittered back-off (see
 * `backoffAfterFailure`) after an error, which is counted (database errors
 * apart) and logged with the loop's name, a streak of them without a line
 * each (FailureStreak: the first, then at most one a minute, and the end).
 * Time is the given clock's.
 */
export function runLoop(spec: LoopSpec, deps: { clock: Clock; logger: Logger; signal: AbortSignal; onTick?: (s: LoopStatus) => void }): RunningLoop {
  const status: LoopStatus = { name: spec.name, intervalMs: spec.intervalMs, ticks: 0, failures: 0, dbErrors: 0 };
  let wakeController = new AbortController();
  let woken = false;
  const log = deps.logger.child({ loop: spec.name });
  const streak = new FailureStreak();

  const done = (async () => {
    while (!deps.signal.aborted) {
      woken = false;
      const started = performance.now();
      let foundWork = false;
      const progressed = () => {
        const now = deps.clock.now();
        tickSucceeded(status, now);
        const ended = streak.succeeded(now.getTime());
        if (ended) log.info(ended, `${spec.name} working again after ${ended.failures} failed ticks`);
      };
      status.tickStartedAt = deps.clock.now();
      try {
        foundWork = await spec.tick(deps.signal, progressed);
        progressed();
      } catch (error) {
        const database = tickFailed(status, error, deps.clock.now());
        // Every failure is counted; the log has the first of a streak, a new kind at once, the same again at most once a minute.
        const refusal = databaseRefusalOf(error);
        const line = streak.failed(status.lastErrorAt!.getTime(), database ? `database${refusal ? `: ${refusal}` : ''}` : `error: ${status.lastError}`);
        if (database) {
          // Expected while the database is away or refusing (read-only, disk full, a lock held elsewhere): no stack.
          if (line) log.warn({ ...line, error: status.lastError, ...(refusal ? { refusal } : {}) }, `${spec.name} tick failed: ${refusal ? refusalText(refusal) : 'database unavailable'}`);
        } else if (line) {
          log.error({ err: error, ...line }, `${spec.name} tick failed`);
        }
      } finally {
        status.tickStartedAt = undefined;
        status.ticks++;
        status.lastDurationMs = performance.now() - started;
        metrics.loopTickSeconds.observe({ loop: spec.name }, status.lastDurationMs / 1000);
        deps.onTick?.(status);
      }
      if (deps.signal.aborted) break;
      if (foundWork && status.failures === 0) continue;
      if (woken) continue;
      const wait = status.failures > 0 ? backoffAfterFailure(spec.intervalMs, status.failures) : spec.intervalMs;
      wakeController = new AbortController();
      const both = AbortSignal.any([deps.signal, wakeController.signal]);
      await deps.clock.sleep(wait, both);
    }
  })();

  return {
    status,
    done,
    wake() {
      woken = true;
      wakeController.abort();
      spec.onWake?.();
    },
  };
}
