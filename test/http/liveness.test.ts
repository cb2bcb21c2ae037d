import { afterAll, beforeAll, expect, it } from 'vitest';
import express from 'express';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { createDb, createPool } from '../../src/db/connect.js';
import { ManualClock } from '../../src/clock.js';
import type { Deps } from '../../src/deps.js';
import { LOOP_HUNG_MS } from '../../src/domain/loop-liveness.js';
import { runLoop, type LoopTick, type RunningLoop } from '../../src/engine/runner.js';
import { healthRouter } from '../../src/http/health.js';
import { silentLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(2);
});
afterAll(async () => t.drop());

/** Two real loops on a ManualClock behind the real health router: `stuck` runs `tick`, `uptime` beats every 5 s unless `down`. */
async function replica(tick: LoopTick, down: () => boolean, db: Deps['db'] = t.db) {
  const clock = new ManualClock('2026-03-10T02:00:00Z');
  const abort = new AbortController();
  const run = (name: string, intervalMs: number, t: LoopTick): RunningLoop => runLoop({ name, intervalMs, tick: t }, { clock, logger: silentLogger, signal: abort.signal });
  const dbError = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const loops = [
    run('stuck', 1_000, tick),
    run('uptime', 5_000, async () => {
      if (down()) throw dbError();
      return false;
    }),
  ];
  const http = express().use(healthRouter({ db, clock } as unknown as Deps, { loops: () => loops.map((l) => l.status) }, clock.now()));
  const server = await new Promise<ReturnType<typeof http.listen>>((resolve) => {
    const s = http.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    clock,
    loops,
    get: async (path: string) => {
      const res = await fetch(`${url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async stop() {
      abort.abort();
      server.close();
    },
  };
}

it('a loop whose tick hangs for 10 minutes while the others work fails /healthz (liveness: restart it), and fails /readyz', async () => {
  let hungTicks = 0;
  const r = await replica(() => (hungTicks++, new Promise<boolean>(() => {})), () => false);
  try {
    await eventually(() => expect(hungTicks).toBe(1));
    expect((await r.get('/healthz')).status).toBe(200);
    r.clock.advance(LOOP_HUNG_MS + 1_000);
    await eventually(() => expect(r.loops[1]!.status.lastTickAt).toEqual(r.clock.now()));
    const live = await r.get('/healthz');
    expect(live).toEqual({ status: 503, body: { status: 'hung', loops: [{ name: 'stuck', stuckSeconds: LOOP_HUNG_MS / 1000 + 1 }] } });
    expect((await r.get('/readyz')).status).toBe(503);
  } finally {
    await r.stop();
  }
});

it('a database outage of the same length leaves /healthz 200 (liveness must not restart for it) and /readyz 503', async () => {
  let down = false;
  const r = await replica(async () => {
    if (down) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    return false;
  }, () => down);
  try {
    await eventually(() => expect(r.loops.every((l) => l.status.lastTickAt)).toBe(true));
    down = true;
    for (let i = 0; i < 12; i++) {
      const ticks = r.loops.map((l) => l.status.ticks);
      r.clock.advance(60_000);
      await eventually(() => expect(r.loops.every((l, j) => l.status.ticks > ticks[j]!)).toBe(true));
    }
    expect(await r.get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect((await r.get('/readyz')).status).toBe(503);
  } finally {
    await r.stop();
  }
});

it('a database that does not answer within 2 s: /readyz 503 saying so (a probe needs timeoutSeconds of 3), /healthz 200', async () => {
  // A server that accepts and never says a word: a frozen PostgreSQL, a black-holed route.
  const sockets: Socket[] = [];
  const blackhole = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
  const hung = createDb(createPool(`postgres://postgres@127.0.0.1:${(blackhole.address() as AddressInfo).port}/none`, 1));
  const r = await replica(async () => false, () => false, hung);
  try {
    await eventually(() => expect(r.loops.every((l) => l.status.lastTickAt)).toBe(true));
    expect(await r.get('/readyz')).toMatchObject({ status: 503, body: { ready: false, database: 'database did not answer within 2 s' } });
    expect(await r.get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  } finally {
    await r.stop();
    for (const socket of sockets) socket.destroy();
    blackhole.close();
    await hung.destroy().catch(() => {});
  }
});
