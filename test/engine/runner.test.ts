import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { backoffAfterFailure, MAX_BACKOFF_MS, runLoop } from '../../src/engine/runner.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { counterValue, metrics } from '../../src/metrics.js';
import { eventually } from '../helpers/eventually.js';

it('backs off from the interval, doubling, jittered, and never past the low cap however many failures', () => {
  expect(backoffAfterFailure(2_000, 1, () => 0)).toBe(1_000);
  expect(backoffAfterFailure(2_000, 1, () => 1)).toBe(2_000);
  expect(backoffAfterFailure(250, 3, () => 1)).toBe(1_000);
  for (const failures of [5, 30, 1_000]) {
    for (const r of [0, 0.5, 1]) {
      const wait = backoffAfterFailure(10_000, failures, () => r);
      expect(wait).toBeGreaterThanOrEqual(MAX_BACKOFF_MS / 2);
      expect(wait).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    }
  }
});

it('after many database failures in a row the loop still tries again within the cap, and one success clears its state', async () => {
  // The old runner doubled to a minute: after a burst of terminations a loop slept through the database's return.
  const clock = new ManualClock('2026-03-10T00:00:00Z');
  const abort = new AbortController();
  let calls = 0;
  let down = true;
  const loop = runLoop(
    {
      name: 'test-db-loop',
      intervalMs: 2_000,
      tick: async () => {
        calls++;
        if (down) throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
        return false;
      },
    },
    { clock, logger: silentLogger, signal: abort.signal },
  );
  const before = await counterValue(metrics.loopDbErrors, { loop: 'test-db-loop' });
  for (let i = 1; i <= 25; i++) {
    await eventually(() => expect(calls).toBe(i));
    await eventually(() => expect(clock.nextWake()).toBeDefined());
    const wait = clock.nextWake()!.getTime() - clock.now().getTime();
    expect(wait).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    if (i === 25) down = false;
    clock.advance(wait);
  }
  await eventually(() => expect(loop.status.lastTickAt).toBeDefined());
  expect(loop.status.failures).toBe(0);
  expect(await counterValue(metrics.loopDbErrors, { loop: 'test-db-loop' })).toBe(before + 25);
  abort.abort();
  await loop.done;
});

it('a long tick that makes progress after failures is working again: failures cleared and its last tick moved on, before it ends', async () => {
  // The outbox sender's drain runs for minutes through a backlog; /readyz must not call it stuck for that long.
  const clock = new ManualClock('2026-03-10T00:00:00Z');
  const abort = new AbortController();
  let calls = 0;
  let step: (() => void) | undefined;
  let finish!: (found: boolean) => void;
  const finished = new Promise<boolean>((resolve) => (finish = resolve));
  const loop = runLoop(
    {
      name: 'test-long-tick',
      intervalMs: 1_000,
      tick: async (_signal, progress) => {
        if (++calls <= 2) throw Object.assign(new Error('Connection terminated unexpectedly'), {});
        step = progress;
        return finished;
      },
    },
    { clock, logger: silentLogger, signal: abort.signal },
  );
  for (let i = 1; i <= 2; i++) {
    await eventually(() => expect(calls).toBe(i));
    await eventually(() => expect(clock.nextWake()).toBeDefined());
    clock.advance(clock.nextWake()!.getTime() - clock.now().getTime());
  }
  await eventually(() => expect(step).toBeDefined());
  expect(loop.status.failures).toBe(2);
  expect(loop.status.lastTickAt).toBeUndefined();
  clock.advance(30_000);
  step!();
  expect(loop.status.failures).toBe(0);
  expect(loop.status.lastTickAt).toEqual(clock.now());
  finish(false);
  abort.abort();
  await loop.done;
});

it('a database outage of minutes is a few log lines, not one per failed tick: the first, one a minute with the count, and the recovery', async () => {
  // A line per failure was every loop, every second or two, for the whole outage: some 20,000 lines an hour per replica.
  const clock = new ManualClock('2026-03-10T00:00:00Z');
  const abort = new AbortController();
  const lines: { level: number; msg: string; failures?: number; unlogged?: number; err?: unknown }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  let calls = 0;
  let down = true;
  const loop = runLoop(
    {
      name: 'test-outage-log',
      intervalMs: 1_000,
      tick: async () => {
        calls++;
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        return false;
      },
    },
    { clock, logger, signal: abort.signal },
  );
  const start = clock.now().getTime();
  for (let i = 1; i <= 150; i++) {
    await eventually(() => expect(calls).toBe(i));
    await eventually(() => expect(clock.nextWake()).toBeDefined());
    if (i === 150) down = false;
    clock.advance(clock.nextWake()!.getTime() - clock.now().getTime());
  }
  await eventually(() => expect(loop.status.failures).toBe(0));
  const minutesDown = (clock.now().getTime() - start) / 60_000;
  const failed = lines.filter((l) => l.msg.includes('tick failed'));
  expect(failed[0]).toMatchObject({ level: 40, failures: 1 });
  expect(failed.length).toBeGreaterThanOrEqual(2);
  expect(failed.length).toBeLessThanOrEqual(1 + Math.ceil(minutesDown));
  // Each later line says how many failed since the one before: nothing is hidden, only not repeated.
  expect(failed.reduce((n, l) => n + 1 + (l.unlogged ?? 0), 0)).toBe(failed.at(-1)!.failures);
  expect(lines.at(-1)).toMatchObject({ level: 30, failures: 150, msg: 'test-outage-log working again after 150 failed ticks' });
  abort.abort();
  await loop.done;
});

it('a bug after an outage is logged at once, with its stack, however recent the last line', async () => {
  const clock = new ManualClock('2026-03-10T00:00:00Z');
  const abort = new AbortController();
  const lines: { level: number; msg: string; err?: { message: string; stack?: string } }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  let calls = 0;
  const loop = runLoop(
    {
      name: 'test-new-error',
      intervalMs: 1_000,
      tick: async () => {
        calls++;
        if (calls <= 3) throw Object.assign(new Error('Connection terminated unexpectedly'), {});
        throw new TypeError("Cannot read properties of undefined (reading 'id')");
      },
    },
    { clock, logger, signal: abort.signal },
  );
  for (let i = 1; i <= 4; i++) {
    await eventually(() => expect(calls).toBe(i));
    await eventually(() => expect(clock.nextWake()).toBeDefined());
    clock.advance(clock.nextWake()!.getTime() - clock.now().getTime());
  }
  const failed = lines.filter((l) => l.msg.includes('tick failed'));
  expect(failed.map((l) => l.level)).toEqual([40, 50]);
  expect(failed[1]!.err).toMatchObject({ message: "Cannot read properties of undefined (reading 'id')" });
  expect(failed[1]!.err!.stack).toBeDefined();
  abort.abort();
  await loop.done;
});
