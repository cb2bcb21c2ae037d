import { readFileSync } from 'node:fs';
import { ManualClock } from '../../src/clock.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { loadConfig } from '../../src/config/env.js';
import type { Deps } from '../../src/deps.js';
import type { Db } from '../../src/db/connect.js';
import { createLaunchers } from '../../src/launch/index.js';
import type { LaunchContext, Launcher } from '../../src/launcher.js';
import { silentLogger } from '../../src/log.js';

/**
 * Polls `probe` until it returns something truthy: for effects that land
 * asynchronously (a child process exiting, a request arriving). Bounded, and
 * never used to wait out a business deadline: those move on the ManualClock.
 */
export async function eventually<T>(probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A ManualClock that knows how many loops are asleep on it, so a test moves
 * time only once every loop is waiting (otherwise a loop still busy with its
 * previous tick would start its sleep after the jump and miss it).
 */
export class CountingClock extends ManualClock {
  sleeping = 0;
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeping++;
    return super.sleep(ms, signal).finally(() => this.sleeping--);
  }
}

/** A replica's dependencies without its HTTP server: what loops and launchers are given. */
export function replicaDeps(db: Db, clock: ManualClock, env: Record<string, string> = {}): Deps {
  const config = loadConfig({ LOG_LEVEL: 'silent', REPLICA_ID: `replica-${Math.random().toString(36).slice(2, 8)}`, ...env });
  const base = { db, clock, config, logger: silentLogger, replicaId: config.REPLICA_ID };
  return { ...base, launchers: createLaunchers(base) };
}

/**
 * A replica whose launcher only records what it was asked to start (the
 * launch boundary; the ledger is real): a fired run stays `running`, so a
 * test reads what fired without racing a real child's exit.
 */
export function recordingReplica(db: Db, clock: ManualClock) {
  const launched: LaunchContext[] = [];
  const launcher: Launcher = {
    kind: 'recording',
    async launch(ctx) {
      launched.push(ctx);
      return { started: true };
    },
  };
  const deps: Deps = { ...replicaDeps(db, clock), launchers: () => launcher };
  return { deps, launched };
}

/** Alive means running or sleeping; a killed orphan nobody has reaped yet (a zombie) is dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export async function finishedRun(db: Db, runId: number, timeoutMs?: number) {
  return eventually(() =>
    db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', runId)
      .where('status', '!=', 'running')
      .executeTakeFirst(),
    timeoutMs,
  );
}

/** Drives the poller until every run of the workflow has ended and been processed; its runs, by attempt. */
export async function settledRuns(db: Db, deps: Deps, workflowId: number, timeoutMs = 20_000) {
  await eventually(async () => {
    await pollFinishedRuns(deps);
    const open = await db
      .selectFrom('runs')
      .select('id')
      .where('workflowId', '=', workflowId)
      .where((eb) => eb.or([eb('status', 'in', ['running', 'pending_retry']), eb('processedAt', 'is', null)]))
      .execute();
    return open.length === 0;
  }, timeoutMs);
  return db.selectFrom('runs').selectAll().where('workflowId', '=', workflowId).orderBy('attempt').execute();
}
