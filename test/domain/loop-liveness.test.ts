import { expect, it } from 'vitest';
import { hungLoops, LOOP_HUNG_MS, LOOP_WORKING_WITHIN_MS, type LoopTickRecord } from '../../src/domain/loop-liveness.js';

const t0 = new Date('2026-03-10T02:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

it('a tick stuck past the limit while another loop works is hung; one within the limit, or making progress, is not', () => {
  const now = at(LOOP_HUNG_MS + 1_000);
  const heartbeat: LoopTickRecord = { name: 'uptime', lastTickAt: at(LOOP_HUNG_MS) };
  expect(hungLoops([{ name: 'run-poller', tickStartedAt: t0 }, heartbeat], now)).toEqual([{ name: 'run-poller', stuckSeconds: LOOP_HUNG_MS / 1000 + 1 }]);
  expect(hungLoops([{ name: 'run-poller', tickStartedAt: at(2_000) }, heartbeat], now)).toEqual([]);
  // A long drain that reported progress a minute ago is working.
  expect(hungLoops([{ name: 'outbox-sender', tickStartedAt: t0, lastTickAt: at(LOOP_HUNG_MS - 60_000) }, heartbeat], now)).toEqual([]);
});

it('never hung for a database outage: no other loop finishes a tick, or did so only before the outage', () => {
  const now = at(LOOP_HUNG_MS + 5 * 60_000);
  expect(hungLoops([{ name: 'run-poller', tickStartedAt: t0 }, { name: 'uptime', lastTickAt: at(30_000) }], now)).toEqual([]);
  expect(hungLoops([{ name: 'run-poller', tickStartedAt: t0 }, { name: 'uptime', lastTickAt: at(5 * 60_000 + LOOP_HUNG_MS - LOOP_WORKING_WITHIN_MS - 1) }], now)).toEqual([]);
  expect(hungLoops([{ name: 'run-poller', tickStartedAt: t0 }], now)).toEqual([]);
});

it('a loop between ticks (idle, or backing off after failures) is not hung however old its last tick', () => {
  const now = at(3 * LOOP_HUNG_MS);
  expect(hungLoops([{ name: 'run-poller', lastTickAt: t0 }, { name: 'uptime', lastTickAt: now }], now)).toEqual([]);
});
