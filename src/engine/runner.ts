import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';

/**
 * One unit of work; resolves true when it found work (the runner then goes
 * again at once), false when idle (the runner sleeps its interval or until woken).
 * `signal` aborts when the loop is stopping: a tick that can run for long
 * (the outbox sender's paced pipelines) winds down on it.
 */
export type LoopTick = (signal?: AbortSignal) => Promise<boolean>;

export interface LoopSpec {
  name: string;
  intervalMs: number;
  tick: LoopTick;
  /** Postgres NOTIFY channels that wake this loop early (the interval stays the fallback). */
  wakeOn?: string[];
}

export interface LoopStatus {
  name: string;
  intervalMs: number;
  lastTickAt?: Date;
  lastErrorAt?: Date;
  lastError?: string;
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

const MAX_BACKOFF_MS = 60_000;

/**
 * Runs `tick` until `signal` aborts: again at once while it finds work, after
 * the interval when idle, and with doubling back-off (capped) after an error,
 * which is logged with the loop's name. Time is the given clock's.
 */
export function runLoop(spec: LoopSpec, deps: { clock: Clock; logger: Logger; signal: AbortSignal; onTick?: (s: LoopStatus) => void }): RunningLoop {
  const status: LoopStatus = { name: spec.name, intervalMs: spec.intervalMs, ticks: 0 };
  let wakeController = new AbortController();
  let woken = false;
  const log = deps.logger.child({ loop: spec.name });

  const done = (async () => {
    let failures = 0;
    while (!deps.signal.aborted) {
      woken = false;
      const started = performance.now();
      let foundWork = false;
      try {
        foundWork = await spec.tick(deps.signal);
        failures = 0;
        status.lastTickAt = deps.clock.now();
      } catch (error) {
        failures++;
        status.lastErrorAt = deps.clock.now();
        status.lastError = error instanceof Error ? error.message : String(error);
        metrics.loopErrors.inc({ loop: spec.name });
        log.error({ err: error, failures }, `${spec.name} tick failed`);
      } finally {
        status.ticks++;
        status.lastDurationMs = performance.now() - started;
        metrics.loopTickSeconds.observe(status.lastDurationMs / 1000, { loop: spec.name });
        deps.onTick?.(status);
      }
      if (deps.signal.aborted) break;
      if (foundWork && failures === 0) continue;
      if (woken) continue;
      const wait = failures > 0 ? Math.min(spec.intervalMs * 2 ** (failures - 1), Math.max(MAX_BACKOFF_MS, spec.intervalMs)) : spec.intervalMs;
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
    },
  };
}
