import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { UPTIME_SLACK_MS } from '../../src/engine/uptime.js';
import type { LoopStatus } from '../../src/engine/runner.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

it('scheduler_replicas_alive counts the replicas whose heartbeat the database saw within the uptime slack, the same on every replica', async () => {
  const clock = new ManualClock('2026-03-10T02:00:00Z');
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);
  await t.db
    .insertInto('monitorUptime')
    .values([
      { replicaId: 'a', startedAt: ago(15_000), lastSeenAt: ago(2_000) },
      { replicaId: 'b', startedAt: ago(600_000), lastSeenAt: ago(UPTIME_SLACK_MS - 1_000) },
      // Stopped (or killed) two minutes ago, and an earlier life of replica a (restarted as the same hostname:pid) seen just now.
      { replicaId: 'c', startedAt: ago(7_200_000), lastSeenAt: ago(120_000) },
      { replicaId: 'a', startedAt: ago(9_000_000), lastSeenAt: ago(20_000) },
    ])
    .execute();
  expect(await renderMetrics({ db: t.db, clock })).toMatch(/^scheduler_replicas_alive 2$/m);
  // b's heartbeat stops being recent; a's older life is not a second replica.
  clock.advance(2_000);
  expect(await renderMetrics({ db: t.db, clock })).toMatch(/^scheduler_replicas_alive 1$/m);
});

it('scheduler_loop_interval_seconds gives each loop its interval (a housekeeping job its period), so one rule can compare scheduler_loop_seconds_since_tick with it', async () => {
  const clock = new ManualClock('2026-03-10T02:00:00Z');
  const loops: LoopStatus[] = [
    { name: 'run-poller', intervalMs: 30_000, ticks: 3, failures: 0, dbErrors: 0, lastTickAt: new Date(clock.now().getTime() - 45_000) },
    { name: 'housekeeping:retention', intervalMs: 3_600_000, ticks: 1, failures: 0, dbErrors: 0 },
  ];
  const text = await renderMetrics({ db: t.db, clock }, () => loops);
  expect(text).toMatch(/^scheduler_loop_interval_seconds\{loop="run-poller"\} 30$/m);
  expect(text).toMatch(/^scheduler_loop_interval_seconds\{loop="housekeeping:retention"\} 3600$/m);
  expect(text).toMatch(/^scheduler_loop_seconds_since_tick\{loop="run-poller"\} 45$/m);
});
