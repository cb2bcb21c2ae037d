import { createServer, type Server } from 'node:http';
import express from 'express';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, configSecrets, type Config } from './config/env.js';
import type { Db } from './db/connect.js';
import type { Deps } from './deps.js';
import { engineLoops, runLoops } from './engine/index.js';
import { runLoop, type LoopSpec, type RunningLoop } from './engine/runner.js';
import { inEngineOrder } from './engine/steps.js';
import { listenForWakeups } from './engine/wakeups.js';
import { healthRouter } from './http/health.js';
import { apiRoutes } from './http/routes.js';
import { unmatchedRoute } from './http/api-error.js';
import { createLaunchers, shutdownLaunchers } from './launch/index.js';
import { heldRunsOf } from './ledger/run-leases.js';
import { jsonEndsWithNewline } from './http/json-newline.js';
import { summariseStop, type StopSummary } from './ledger/stop-summary.js';
import { markFileSyncsStopped } from './services/file-sync-order.js';
import type { LauncherResolver } from './launcher.js';
import type { Logger } from './log.js';
import { withDestinationIdKey } from './ledger/destination-id-key.js';
import { rememberSecrets } from './secrets.js';
import { rememberStoredSecrets, secretsRefreshLoop } from './services/stored-secrets.js';
import { startSlack } from './slack/index.js';
import { createHousekeeping } from './engine/housekeeping.js';
import { housekeepingJobs } from './engine/housekeeping-jobs.js';
import { accessLog } from './http/access-log.js';

/**
 * The HTTP server's limits (docs/api.md). A client must send its headers
 * within 30 s and its whole request within 120 s (a 10 MB ping body at
 * 85 KB/s; a crontab ping sends 100 KB at most), so a slow client cannot hold
 * a connection open for Node's default 5 minutes. Bodies are read whole
 * before any transaction starts, so a slow one never holds a transaction.
 * Idle keep-alive connections close after 5 s and headers are at most 16 KB
 * (Node's defaults, set here so they are visible and tested).
 */
export const HTTP_LIMITS = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
};

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is in use by another process (EADDRINUSE)',
  EACCES: 'not allowed to listen on this port (EACCES: below 1024 needs privileges)',
  EADDRNOTAVAIL: 'HOST is not an address of this machine (EADDRNOTAVAIL)',
  ENOTFOUND: 'HOST is not a name that resolves (ENOTFOUND)',
  EAI_AGAIN: 'HOST could not be resolved now (EAI_AGAIN)',
};

/** The HTTP server with HTTP_LIMITS, listening. */
function listen(handler: express.Express, port: number, host: string | undefined): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createServer({ maxHeaderSize: HTTP_LIMITS.maxHeaderSize }, handler);
    s.headersTimeout = HTTP_LIMITS.headersTimeoutMs;
    s.requestTimeout = HTTP_LIMITS.requestTimeoutMs;
    s.keepAliveTimeout = HTTP_LIMITS.keepAliveTimeoutMs;
    // The operator's PORT or HOST at fault (in use, not an address of this host): named, as any bad setting is.
    s.once('error', (error: NodeJS.ErrnoException) => reject(new ConfigError([`PORT=${port} HOST=${JSON.stringify(host ?? '')}: cannot listen: ${LISTEN_ERRORS[error.code ?? ''] ?? error.message}`])));
    s.listen(port, host, () => resolve(s));
  });
}

export interface AppOptions {
  config: Config;
  db: Db;
  /** The pool the HTTP API's requests use, so that a burst of them never queues the loops' queries (see open-database.ts); `db` when absent. */
  apiDb?: Db;
  /** The run poller's own pool (see open-database.ts); `db` when absent. */
  pollerDb?: Db;
  /** The database URL, for the LISTEN connection that wakes loops early. */
  databaseUrl?: string;
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
  /** Stops it; says what it left behind (undefined: the database did not answer the count). */
  stop(): Promise<StopSummary | undefined>;
}

/**
 * One replica: the HTTP server (Slack, API, pings, health) and every loop.
 * Any number of these may run against one database.
 */
export async function startApp(options: AppOptions): Promise<RunningApp> {
  const clock = options.clock ?? systemClock;
  const config = await destinationIdKeyed(options);
  rememberSecrets(configSecrets(config));
  // A replica starts with its database down (it reconnects later); the secrets then come as they are used or set.
  await rememberStoredSecrets(options.db).catch((error) => options.logger.warn({ err: error }, 'could not read stored secrets for redaction'));
  const base = { db: options.db, clock, config, logger: options.logger, replicaId: config.REPLICA_ID };
  const deps: Deps = { ...base, launchers: options.launchers ?? createLaunchers(base), ...(options.pollerDb ? { pollerDb: options.pollerDb } : {}) };
  const startedAt = clock.now();
  const runner = loopRunner({ clock, logger: options.logger });
  const loops: RunningLoop[] = [];

  const http = express();
  http.disable('x-powered-by');
  let shuttingDown = false;
  const inFlight = trackRequests(http);
  http.use(accessLog(options.logger, clock), jsonEndsWithNewline);
  // Read only once requests come in: housekeeping is made after Slack, whose digest job it runs.
  const housekeepingStatuses = () => (options.loops !== false ? housekeeping.statuses() : []);
  const statuses = () => [...loops.map((l) => l.status), ...housekeepingStatuses()];
  http.use(healthRouter(deps, { loops: () => loops.map((l) => l.status), housekeeping: housekeepingStatuses }, startedAt, () => shuttingDown));
  const slack = await startSlack(http, deps);
  const housekeeping = createHousekeeping(deps, [...housekeepingJobs(deps), ...slack.housekeeping]);
  // The API's own pool, and this replica's wake-ups: `deps.wake` is set once the loops run (below), after this copy is made.
  const apiDeps: Deps = options.apiDb ? { ...deps, db: options.apiDb, wake: (channel) => deps.wake?.(channel) } : deps;
  // The loop metrics (seconds since tick, failures in a row) cover the housekeeping jobs as they do the loops.
  http.use(apiRoutes(apiDeps, statuses));
  http.use(unmatchedRoute);

  const server = await listen(http, options.port ?? config.PORT, config.HOST);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  let listening: Promise<void> = Promise.resolve();
  if (options.loops !== false) {
    const specs = inEngineOrder([...runLoops(deps), ...engineLoops(deps), ...slack.loops, secretsRefreshLoop(deps)]);
    loops.push(...runner.start(specs));
    const wakeLoops = (channel: string) => specs.forEach((s, i) => s.wakeOn?.includes(channel) && loops[i]!.wake());
    deps.wake = wakeLoops;
    housekeeping.start();
    if (options.databaseUrl) {
      const channels = specs.flatMap((s) => s.wakeOn ?? []);
      listening = listenForWakeups(
        options.databaseUrl,
        channels,
        wakeLoops,
        options.logger,
        runner.signal,
      );
    }
  }

  let stopping: Promise<StopSummary | undefined> | undefined;
  return {
    deps,
    port,
    server,
    loops,
    stop() {
      stopping ??= (async () => {
        // Not ready from now on; the server keeps answering (a job reporting its end while this replica's commands finish).
        shuttingDown = true;
        const inFlightRuns = heldRunsOf(deps.launchers)?.list() ?? [];
        await Promise.all([runner.stopAllButLeaseRenewal(listening), housekeeping.stop()]);
        // The commands may run on for the grace (longer than a run's lease): their leases are renewed until they end, so no other replica fails them as "worker lost" and retries them meanwhile.
        await shutdownLaunchers(deps.launchers, config.SHUTDOWN_GRACE_SECONDS * 1000);
        await runner.stopLeaseRenewal();
        await slack.stop();
        // No new connections; idle keep-alive ones closed; the requests in flight are answered (within HTTP_DRAIN_MS), then the rest cut.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await inFlight.drained(HTTP_DRAIN_MS);
        server.closeAllConnections();
        await closed;
        return whatTheStopLeft(deps, inFlightRuns);
      })();
      return stopping;
    },
  };
}

/**
 * The stop recorded (this replica's workflows file syncs marked stopped:
 * src/domain/file-sync-order.ts) and counted, for the line that says the stop
 * completed; a database away at the stop leaves the counts unknown, not the
 * stop failed.
 */
async function whatTheStopLeft(deps: Deps, runIds: number[]): Promise<StopSummary | undefined> {
  try {
    await markFileSyncsStopped(deps.db, deps.replicaId, deps.clock.now());
    return await summariseStop(deps.db, deps.replicaId, runIds, deps.clock.now());
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not record the stop nor count what it left behind');
    return undefined;
  }
}

/**
 * Starts the loops and stops them in two steps: every loop but lease
 * renewal first; lease renewal only once the commands whose leases it
 * renews have ended (after the shutdown grace), so a command running on
 * through a grace longer than its lease keeps it.
 */
function loopRunner(deps: { clock: Clock; logger: Logger }) {
  const abort = new AbortController();
  const leases = new AbortController();
  const all: RunningLoop[] = [];
  const renewing = new Set<RunningLoop>();
  return {
    signal: abort.signal,
    start(specs: LoopSpec[]): RunningLoop[] {
      return specs.map((spec) => {
        const renews = spec.step === 'lease-renewal';
        const loop = runLoop(spec, { ...deps, signal: renews ? leases.signal : abort.signal });
        all.push(loop);
        if (renews) renewing.add(loop);
        return loop;
      });
    },
    async stopAllButLeaseRenewal(also: Promise<void>): Promise<void> {
      abort.abort();
      await Promise.allSettled([...all.filter((l) => !renewing.has(l)).map((l) => l.done), also]);
    },
    async stopLeaseRenewal(): Promise<void> {
      abort.abort();
      leases.abort();
      await Promise.allSettled(all.map((l) => l.done));
    },
  };
}

/**
 * How long a stopping replica waits for the HTTP requests it is answering
 * (a report in its transaction, a Slack click) before it closes their
 * connections. Each is bounded by the database timeouts anyway; this keeps
 * a stuck one from holding the shutdown past an orchestrator's kill.
 */
export const HTTP_DRAIN_MS = 10_000;

/** Counts the requests being answered, so that a stopping replica can let them finish instead of cutting their connections. */
function trackRequests(http: express.Express): { drained(limitMs: number): Promise<void> } {
  let count = 0;
  let waiters: (() => void)[] = [];
  http.use((_req, res, next) => {
    count++;
    res.once('close', () => {
      if (--count === 0) for (const w of waiters.splice(0)) w();
    });
    next();
  });
  return {
    drained(limitMs) {
      if (count === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs);
        timer.unref();
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/**
 * The configuration with the database's destination id key. main.ts loads it
 * after the migrations, so a replica always starts with it; an app started on
 * a database directly (tests, benchmarks, the chaos harness) reads it here.
 * Started with that database away, it has none: routing to a webhook then
 * fails loudly (destinationId) rather than naming the destination by its URL.
 */
async function destinationIdKeyed(options: AppOptions): Promise<Config> {
  if (options.config.destinationIdKey) return options.config;
  try {
    return await withDestinationIdKey(options.db, options.config);
  } catch (error) {
    options.logger.warn({ err: error }, 'could not read the destination id key: webhook destinations cannot be routed by this app');
    return options.config;
  }
}
