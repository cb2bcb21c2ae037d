import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createUptimeHeartbeat, UPTIME_BEAT_MS } from '../../src/engine/uptime.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

function replica(replicaId: string) {
  const lines: { level: number; msg: string; replicaId?: string }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { heartbeat: createUptimeHeartbeat({ db: t.db, replicaId, logger }), errors: () => lines.filter((l) => l.level >= 50) };
}

it('two live replicas under one REPLICA_ID (a Deployment that sets it for every pod) are told, once, as an error', async () => {
  // They would renew, release and judge each other's run leases as their own.
  const clock = new ManualClock('2026-03-10T02:00:00Z');
  const a = replica('scheduler-bot');
  const b = replica('scheduler-bot');
  for (let i = 0; i < 4; i++) {
    await a.heartbeat.beat(clock.now());
    await b.heartbeat.beat(clock.now());
    clock.advance(UPTIME_BEAT_MS);
  }
  for (const r of [a, b]) {
    expect(r.errors()).toHaveLength(1);
    expect(r.errors()[0]).toMatchObject({ replicaId: 'scheduler-bot', msg: expect.stringContaining('REPLICA_ID') });
  }
});

it('a replica restarted under the same name (hostname:pid of a container restarted in its pod) is not told', async () => {
  const clock = new ManualClock('2026-03-10T03:00:00Z');
  const before = replica('pod-1:1');
  await before.heartbeat.beat(clock.now());
  clock.advance(UPTIME_BEAT_MS);
  await before.heartbeat.beat(clock.now());
  clock.advance(1_000);
  const after = replica('pod-1:1');
  for (let i = 0; i < 4; i++) {
    await after.heartbeat.beat(clock.now());
    clock.advance(UPTIME_BEAT_MS);
  }
  expect(after.errors()).toEqual([]);
});
