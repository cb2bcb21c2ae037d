import { createInterface } from 'node:readline';
import { startApp, type RunningApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/env.js';
import { createDb, createPool } from '../src/db/connect.js';
import type { Deps } from '../src/deps.js';
import { engineLoops } from '../src/engine/index.js';
import { runLoop, type RunningLoop } from '../src/engine/runner.js';
import { listenForWakeups } from '../src/engine/wakeups.js';
import { createLogger } from '../src/log.js';
import { openDatabase } from '../src/open-database.js';

/**
 * One replica for the benchmarks, as a process of its own. BENCH_MODE says what it runs:
 * - engine: the monitoring engine's loops only (poller, escalation, freshness, uptime) with LISTEN wake-ups; starts on `go`;
 * - app: the whole replica as src/main.ts starts it (its two pools, startApp: HTTP, tick scheduler, engine, outbox); starts at once;
 * - graphile: a graphile-worker (BENCH_PEER_SETTINGS, else its defaults) with one no-op task; starts on `go`;
 * - pgboss: pg-boss 10 work() loops (BENCH_PEER_SETTINGS) on a no-op queue; starts on `go`.
 * It speaks JSON lines on stdout (`ready` with the app's port, `stopped` with peak RSS) and reads `go` / `stop` on stdin.
 */
const mode = process.env.BENCH_MODE ?? 'engine';
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');

const say = (message: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(message)}\n`);
let rssPeak = process.memoryUsage.rss();
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 100);

const config = loadConfig(process.env);
const logger = createLogger(config.LOG_LEVEL, process.stderr as never);
let start: () => Promise<void> = async () => {};
let stop: () => Promise<void> = async () => {};
let readyInfo: Record<string, unknown> = {};

if (mode === 'engine') {
  const db = createDb(createPool(url, 10));
  const deps: Deps = { db, clock: systemClock, config, logger, replicaId: config.REPLICA_ID, launchers: () => undefined };
  const abort = new AbortController();
  let loops: RunningLoop[] = [];
  let listening: Promise<void> = Promise.resolve();
  start = async () => {
    const specs = engineLoops(deps);
    loops = specs.map((spec) => runLoop(spec, { clock: systemClock, logger, signal: abort.signal }));
    const channels = specs.flatMap((s) => s.wakeOn ?? []);
    listening = listenForWakeups(url, channels, (channel) => specs.forEach((s, i) => s.wakeOn?.includes(channel) && loops[i]!.wake()), logger, abort.signal);
  };
  stop = async () => {
    abort.abort();
    await Promise.allSettled([...loops.map((l) => l.done), listening]);
    await db.destroy();
  };
} else if (mode === 'app') {
  // As src/main.ts opens it: the loops' pool, the API's own and the poller's.
  const database = await openDatabase(config, logger);
  const app: RunningApp = await startApp({ config, db: database.db, apiDb: database.apiDb, pollerDb: database.pollerDb, databaseUrl: database.url, logger, port: 0 });
  readyInfo = { port: app.port };
  stop = async () => {
    await app.stop();
    await database.close();
  };
} else if (mode === 'graphile') {
  const { run, Logger } = await import('graphile-worker');
  // BENCH_PEER_SETTINGS: graphile-worker's own options (concurrency, maxPoolSize, pollInterval…); none means its defaults.
  const settings = JSON.parse(process.env.BENCH_PEER_SETTINGS ?? '{}') as Record<string, unknown>;
  let runner: Awaited<ReturnType<typeof run>> | undefined;
  start = async () => {
    runner = await run({ ...settings, connectionString: url, taskList: { noop: async () => {} }, noHandleSignals: true, logger: new Logger(() => () => {}) });
  };
  stop = async () => {
    await runner?.stop();
  };
} else if (mode === 'pgboss') {
  // BENCH_PEER_SETTINGS: { workers, batchSize, pollingIntervalSeconds }: `workers` work() loops, each fetching and completing batchSize jobs at a time.
  const { default: PgBoss } = await import('pg-boss');
  const settings = JSON.parse(process.env.BENCH_PEER_SETTINGS ?? '{}') as { workers?: number; batchSize?: number; pollingIntervalSeconds?: number };
  const workers = settings.workers ?? 1;
  const boss = new PgBoss({ connectionString: url, max: workers + 2, supervise: false, schedule: false, migrate: false });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${String(error)}\n`));
  await boss.start();
  start = async () => {
    const options = { batchSize: settings.batchSize ?? 1, pollingIntervalSeconds: settings.pollingIntervalSeconds ?? 2 };
    for (let i = 0; i < workers; i++) await boss.work('noop', options, async () => {});
  };
  stop = async () => {
    await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  };
} else {
  throw new Error(`unknown BENCH_MODE ${mode}`);
}

say({ type: 'ready', pid: process.pid, ...readyInfo });
const input = createInterface({ input: process.stdin });
for await (const line of input) {
  if (line === 'go') {
    await start();
    say({ type: 'started' });
  } else if (line === 'stop') {
    await stop();
    clearInterval(sampler);
    say({ type: 'stopped', rssPeakBytes: Math.max(rssPeak, process.memoryUsage.rss()) });
    break;
  }
}
process.exit(0);
