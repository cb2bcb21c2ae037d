import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { UPTIME_SLACK_MS } from '../../src/engine/uptime.js';
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
