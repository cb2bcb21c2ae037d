import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startTestApp } from './helpers/app.js';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { ConfigError } from '../src/config/env.js';
import { createDb, createPool, DB_TIMEOUTS } from '../src/db/connect.js';
import { METRICS_DB_TIMEOUT_MS, renderMetrics } from '../src/http/metrics-route.js';
import { ManualClock } from '../src/clock.js';
import { createHousekeeping } from '../src/engine/housekeeping.js';
import type { LoopStatus } from '../src/engine/runner.js';
import { checkReadiness } from '../src/http/health.js';
import { silentLogger } from '../src/log.js';
import type { Deps } from '../src/deps.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(2);
});
afterAll(async () => t.drop());

describe('health endpoints', () => {
  it('report ready while the database answers, and not ready when it does not', async () => {
    const app = await startTestApp(t);
    try {
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    } finally {
      await app.stop();
    }
    // A replica whose database is unreachable is alive but not ready.
    const unreachable = createDb(createPool('postgres://postgres@127.0.0.1:1/none', 1));
    const down = await startTestApp({ db: unreachable, url: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      expect((await fetch(`${down.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${down.url}/readyz`);
      expect(ready.status).toBe(503);
      // Why, without the server's address: this answer is unauthenticated (it said "connect ECONNREFUSED 127.0.0.1:1").
      const { database } = await ready.json();
      expect(database).toBe('not reachable (refused, dropped or timed out; the log has the details)');
    } finally {
      await down.stop();
      await unreachable.destroy();
    }
  });

  it('a port already in use stops the start naming PORT and HOST, with the reason in words', async () => {
    const first = await startTestApp(t);
    try {
      const second = startTestApp(t, { HOST: '127.0.0.1' }, { port: first.port });
      await expect(second).rejects.toBeInstanceOf(ConfigError);
      await expect(second).rejects.toMatchObject({ problems: [`PORT=${first.port} HOST="127.0.0.1": cannot listen: the port is in use by another process (EADDRINUSE)`] });
    } finally {
      await first.stop();
    }
  });

  it('/metrics answers within its limit with scheduler_database_up 0 when the database hangs, not after the connect timeout', async () => {
    // A server that accepts and never says a word: a frozen PostgreSQL, a black-holed route.
    const sockets: Socket[] = [];
    const blackhole = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const url = `postgres://postgres@127.0.0.1:${(blackhole.address() as AddressInfo).port}/none`;
    const hung = createDb(createPool(url, 1));
    try {
      const started = performance.now();
      const text = await renderMetrics({ db: hung, clock: new ManualClock('2026-03-10T02:00:00Z') });
      const tookMs = performance.now() - started;
      expect(text).toMatch(/^scheduler_database_up 0$/m);
      expect(text).not.toMatch(/^scheduler_open_alerts/m);
      // Within METRICS_DB_TIMEOUT_MS, well inside Prometheus's default 10 s scrape_timeout (it took the 5 s connect timeout, or 35 s on a stalled query).
      expect(tookMs).toBeGreaterThanOrEqual(METRICS_DB_TIMEOUT_MS - 50);
      expect(tookMs).toBeLessThan(DB_TIMEOUTS.CONNECT_TIMEOUT_MS - 500);
    } finally {
      for (const socket of sockets) socket.destroy();
      blackhole.close();
      await hung.destroy().catch(() => {});
    }
  });

  it('a failed housekeeping firing is shown in /readyz but leaves the replica ready; firings that keep failing on the database make it unready until the loops work again', async () => {
    const clock = new ManualClock('2026-03-10T02:00:00Z');
    const startedAt = clock.now();
    const deps = { db: t.db, clock } as unknown as Deps;
    const loop: LoopStatus = { name: 'run-poller', intervalMs: 1_000, ticks: 1, failures: 0, dbErrors: 0, lastTickAt: clock.now() };
    let fail: Error | undefined;
    const h = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'a' }, [
      { name: 'retention', cron: '17 * * * *', run: async () => { if (fail) throw fail; return {}; } },
    ]);
    const sources = { loops: () => [loop], housekeeping: () => h.statuses() };

    fail = new Error('canceling statement due to statement timeout');
    await h.fire('retention', new Date('2026-03-10T02:17:00Z'));
    let readiness = await checkReadiness(deps, sources, startedAt);
    expect(readiness.ready).toBe(true);
    expect(readiness.loops.map((l) => l.name)).toEqual(['run-poller']);
    expect(readiness.housekeeping).toEqual([{ name: 'housekeeping:retention', status: 'failing', blocksReadiness: false, lastTickAt: null, lastErrorAt: clock.now().toISOString(), failures: 1 }]);

    // Database failures after the job's own: a streak that is not the database every time leaves the replica ready.
    fail = new Error('Connection terminated unexpectedly');
    for (const hour of [3, 4, 5]) {
      clock.set(`2026-03-10T0${hour}:17:00Z`);
      loop.lastTickAt = clock.now();
      await h.fire('retention', clock.now());
    }
    readiness = await checkReadiness(deps, sources, startedAt);
    expect(readiness.housekeeping[0]).toMatchObject({ status: 'failing', failures: 4 });
    expect(readiness.ready).toBe(true);
    clock.set('2026-03-10T06:17:00Z');
    loop.lastTickAt = clock.now();
    await h.fire('retention', clock.now());
    readiness = await checkReadiness(deps, sources, startedAt);
    expect(readiness.ready).toBe(true);
    expect(readiness.housekeeping[0]).toMatchObject({ status: 'failing', blocksReadiness: false, failures: 5 });

    // A fresh streak of the database alone.
    fail = undefined;
    clock.set('2026-03-10T07:17:00Z');
    loop.lastTickAt = clock.now();
    await h.fire('retention', clock.now());
    fail = new Error('Connection terminated unexpectedly');
    for (const hour of [8, 9]) {
      clock.set(`2026-03-10T0${hour}:17:00Z`);
      loop.lastTickAt = clock.now();
      await h.fire('retention', clock.now());
    }
    expect((await checkReadiness(deps, sources, startedAt)).ready).toBe(true);
    // The loop's last tick came before the firing failed: nothing says the database works since.
    clock.set('2026-03-10T10:17:00Z');
    loop.lastTickAt = clock.now();
    await h.fire('retention', clock.now());
    readiness = await checkReadiness(deps, sources, startedAt);
    expect(readiness.housekeeping[0]).toMatchObject({ status: 'database failing', blocksReadiness: true, failures: 3 });
    expect(readiness.ready).toBe(false);
    // The loop works again after the last failure: the database is usable, the replica ready.
    clock.advance(1_000);
    loop.lastTickAt = clock.now();
    readiness = await checkReadiness(deps, sources, startedAt);
    expect(readiness).toMatchObject({ ready: true, housekeeping: [{ status: 'database failing', blocksReadiness: false }] });
  });
});
