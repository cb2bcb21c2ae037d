import type { Server } from 'node:http';
import express from 'express';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/env.js';
import type { Db } from './db/connect.js';
import type { Deps } from './deps.js';
import { runLoop, type LoopSpec, type RunningLoop } from './engine/runner.js';
import { healthRouter } from './http/health.js';
import type { Logger } from './log.js';
import type { LauncherResolver } from './launch/types.js';

export interface AppOptions {
  config: Config;
  db: Db;
  logger: Logger;
  clock?: Clock;
  /** Listen on this port instead of config.PORT (0 picks a free one). */
  port?: number;
  /** Launchers for workflows' runs; the real ones unless a test or the replay scripts outcomes. */
  launchers?: LauncherResolver;
  /** Start the background loops (default true); tests that drive ticks by hand turn them off. */
  loops?: boolean;
}

export interface RunningApp {
  deps: Deps;
  port: number;
  server: Server;
  loops: RunningLoop[];
  stop(): Promise<void>;
}

/** The loops every replica runs. Each area adds its own here. */
function loopSpecs(_deps: Deps): LoopSpec[] {
  return [];
}

export async function startApp(options: AppOptions): Promise<RunningApp> {
  const clock = options.clock ?? systemClock;
  const deps: Deps = {
    db: options.db,
    clock,
    config: options.config,
    logger: options.logger,
    replicaId: options.config.REPLICA_ID,
    launchers: options.launchers ?? (() => undefined),
  };
  const startedAt = clock.now();
  const abort = new AbortController();
  const loops: RunningLoop[] = [];

  const http = express();
  http.disable('x-powered-by');
  http.use(healthRouter(deps, () => loops.map((l) => l.status), startedAt));

  const server = await new Promise<Server>((resolve, reject) => {
    const s = http.listen(options.port ?? options.config.PORT, options.config.HOST, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  if (options.loops !== false) {
    for (const spec of loopSpecs(deps)) loops.push(runLoop(spec, { clock, logger: options.logger, signal: abort.signal }));
  }

  let stopping: Promise<void> | undefined;
  return {
    deps,
    port,
    server,
    loops,
    stop() {
      stopping ??= (async () => {
        abort.abort();
        await Promise.allSettled(loops.map((l) => l.done));
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return stopping;
    },
  };
}
