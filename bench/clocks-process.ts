import { systemClock, type Clock } from '../src/clock.js';
import { loadConfig } from '../src/config/env.js';
import { createDb, createPool } from '../src/db/connect.js';
import type { Deps } from '../src/deps.js';
import { runEscalationClock } from '../src/engine/escalation.js';
import { checkFreshness } from '../src/engine/freshness.js';
import { runLoop } from '../src/engine/runner.js';
import { createUptimeHeartbeat } from '../src/engine/uptime.js';
import { tickSchedulerLoop } from '../src/engine/tick-scheduler.js';
import { silentLogger } from '../src/log.js';
import { latenessRecorder } from './lib/lateness.js';
import { percentile } from './lib/stats.js';

/**
 * Benchmark 3's replica (a process of its own, so its RSS is the replica's):
 * the clock reads real time shifted to just before BOUNDARY, the tick
 * scheduler runs until every workflow due at BOUNDARY has been launched
 * (lateness = launch time − tick), then one escalation-clock pass and one
 * freshness pass are timed. Prints one JSON line.
 */
const url = process.env.DATABASE_URL!;
const boundary = new Date(process.env.BOUNDARY!).getTime();
const expected = Number(process.env.EXPECTED_FIRES);
const offset = boundary - 1500 - systemClock.now().getTime();
const clock: Clock = { now: () => new Date(systemClock.now().getTime() + offset), sleep: systemClock.sleep };

let rssPeak = process.memoryUsage.rss();
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 50);

const { launcher, lateness } = latenessRecorder(clock);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const db = createDb(createPool(url, 10));
const deps: Deps = { db, clock, config, logger: silentLogger, replicaId: 'bench-clocks', launchers: () => launcher };
await createUptimeHeartbeat(deps).beat(new Date(boundary - 3_600_000));

const abort = new AbortController();
const loop = runLoop(tickSchedulerLoop(deps), { clock, logger: silentLogger, signal: abort.signal });
const deadline = performance.now() + 180_000;
while (lateness.length < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
abort.abort();
await loop.done;

let t = performance.now();
await runEscalationClock(deps);
const escalationMs = performance.now() - t;
t = performance.now();
await checkFreshness(deps);
const freshnessMs = performance.now() - t;
clearInterval(sampler);
process.stdout.write(
  `${JSON.stringify({ fired: lateness.length, latenessP50: percentile(lateness, 50), latenessP99: percentile(lateness, 99), escalationMs, freshnessMs, rssPeakBytes: Math.max(rssPeak, process.memoryUsage.rss()) })}\n`,
);
await db.destroy();
process.exit(0);
