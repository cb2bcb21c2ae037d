import { sql } from 'kysely';
import { Router } from 'express';
import type { Deps } from '../deps.js';
import type { LoopStatus } from '../engine/runner.js';

export interface Readiness {
  ready: boolean;
  database: 'ok' | string;
  loops: { name: string; ok: boolean; lastTickAt: string | null }[];
}

/**
 * Ready means the database answers and every loop finished a tick within twice
 * its interval (plus a little slack for a tick that is itself slow).
 */
export async function checkReadiness(deps: Deps, loops: () => LoopStatus[], startedAt: Date): Promise<Readiness> {
  let database = 'ok';
  try {
    await Promise.race([
      sql`select 1`.execute(deps.db),
      new Promise((_, reject) => setTimeout(() => reject(new Error('database did not answer within 2 s')), 2000).unref()),
    ]);
  } catch (error) {
    database = error instanceof Error ? error.message : String(error);
  }
  const now = deps.clock.now().getTime();
  const loopStates = loops().map((l) => {
    const since = l.lastTickAt?.getTime() ?? startedAt.getTime();
    return { name: l.name, ok: now - since <= 2 * l.intervalMs + 5_000, lastTickAt: l.lastTickAt?.toISOString() ?? null };
  });
  return { ready: database === 'ok' && loopStates.every((l) => l.ok), database, loops: loopStates };
}

export function healthRouter(deps: Deps, loops: () => LoopStatus[], startedAt: Date): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const readiness = await checkReadiness(deps, loops, startedAt);
    res.status(readiness.ready ? 200 : 503).json(readiness);
  });
  return router;
}
