import { sql } from 'kysely';
import { Router } from 'express';
import type { Deps } from '../deps.js';
import type { LoopStatus } from '../engine/runner.js';
import { housekeepingHealth, type HousekeepingState } from '../domain/housekeeping-health.js';
import { isConnectionError } from '../db/connection-errors.js';
import { hungLoops } from '../domain/loop-liveness.js';

export interface Readiness {
  ready: boolean;
  /** True once the replica is shutting down: never ready again, whatever else holds. */
  stopping?: boolean;
  database: 'ok' | string;
  loops: { name: string; ok: boolean; lastTickAt: string | null; failures: number }[];
  /**
   * The housekeeping jobs (retention, digest): shown, but a failed firing
   * does not make the replica unready (src/domain/housekeeping-health.ts).
   */
  housekeeping: { name: string; status: HousekeepingState; blocksReadiness: boolean; lastTickAt: string | null; lastErrorAt: string | null; failures: number }[];
}

/** What /readyz looks at: the loops, and the housekeeping jobs (each as a LoopStatus). */
export interface ReadinessSources {
  loops: () => LoopStatus[];
  housekeeping?: () => LoopStatus[];
}

const READ_ONLY = 'read-only: every write is refused (a standby not yet promoted, or default_transaction_read_only on)';

/** How long /readyz waits for the database's answer before calling it down. */
export const READINESS_DB_TIMEOUT_MS = 2_000;

/**
 * Ready means the database answers now (asked on every call, never cached),
 * and not read-only, and every loop is working: its last tick succeeded (a loop whose tick
 * failed, because the database went away, is not ready again until it has
 * done a tick since it came back) and that was within twice its interval
 * (plus a little slack for a tick that is itself slow). A housekeeping job
 * counts only when its firings keep failing because the database does
 * (housekeepingHealth); otherwise its state is in the body, not the verdict.
 */
export async function checkReadiness(deps: Deps, sources: ReadinessSources, startedAt: Date): Promise<Readiness> {
  let database = 'ok';
  try {
    const answer = await Promise.race([
      sql<{ readOnly: string }>`select current_setting('transaction_read_only') as read_only`.execute(deps.db),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`database did not answer within ${READINESS_DB_TIMEOUT_MS / 1000} s`)), READINESS_DB_TIMEOUT_MS).unref()),
    ]);
    // Answering but refusing every write (a standby not yet promoted, default_transaction_read_only on): not ready either.
    if (answer.rows[0]?.readOnly === 'on') database = READ_ONLY;
  } catch (error) {
    database = databaseFailure(error);
  }
  const now = deps.clock.now().getTime();
  const loops = sources.loops();
  const loopStates = loops.map((l) => {
    const since = l.lastTickAt?.getTime() ?? startedAt.getTime();
    const ok = l.failures === 0 && now - since <= 2 * l.intervalMs + 5_000;
    return { name: l.name, ok, lastTickAt: l.lastTickAt?.toISOString() ?? null, failures: l.failures };
  });
  const loopsLastTickAt = loops.map((l) => l.lastTickAt);
  const jobs = (sources.housekeeping?.() ?? []).map((j) => {
    const health = housekeepingHealth(j, loopsLastTickAt);
    // The error's text is in the log and in housekeeping_firings, not in this unauthenticated answer.
    return { name: j.name, status: health.state, blocksReadiness: health.blocksReadiness, lastTickAt: j.lastTickAt?.toISOString() ?? null, lastErrorAt: j.lastErrorAt?.toISOString() ?? null, failures: j.failures };
  });
  return { ready: database === 'ok' && loopStates.every((l) => l.ok) && !jobs.some((j) => j.blocksReadiness), database, loops: loopStates, housekeeping: jobs };
}

/**
 * Why the database is not ok, in words fit for this unauthenticated answer:
 * the driver's message names the server's address and port, its host name
 * or the database user (`password authentication failed for user …`), which
 * are nobody's business on the public port. The loops log the full error.
 */
function databaseFailure(error: unknown): string {
  if (error instanceof Error && error.message.startsWith('database did not answer within')) return error.message;
  if (isConnectionError(error)) return 'not reachable (refused, dropped or timed out; the log has the details)';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? `failing: SQLSTATE ${code} (the log has the details)` : 'failing (the log has the details)';
}

/**
 * `stopping` says the replica is on its way out (SIGTERM): /readyz answers 503
 * from that moment, so the load balancer stops sending it requests while its
 * commands finish and the requests it already has are answered.
 */
export function healthRouter(deps: Deps, sources: ReadinessSources, startedAt: Date, stopping: () => boolean = () => false): Router {
  const router = Router();
  // Liveness: the process answers and no loop is hung (a tick stuck for 10 minutes while the database answers
  // the others: only a restart ends it). A database outage never fails it; /readyz says that (src/domain/loop-liveness.ts).
  router.get('/healthz', (_req, res) => {
    const hung = hungLoops(sources.loops(), deps.clock.now());
    if (hung.length) res.status(503).json({ status: 'hung', loops: hung });
    else res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    if (stopping()) {
      res.status(503).json({ ready: false, stopping: true, database: 'not asked: shutting down', loops: [], housekeeping: [] } satisfies Readiness);
      return;
    }
    const readiness = await checkReadiness(deps, sources, startedAt);
    res.status(readiness.ready ? 200 : 503).json(readiness);
  });
  return router;
}
