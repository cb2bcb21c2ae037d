import { getEventListeners } from 'node:events';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { listenForWakeups } from '../../src/engine/wakeups.js';
import { createLogger } from '../../src/log.js';
import { eventually } from '../helpers/eventually.js';

it('a wake-up connection that cannot reconnect through an outage holds no listener per attempt and logs its first failure, then one a minute', async () => {
  // Each attempt added an abort listener to the app's signal, holding its pg.Client, for the life of the process:
  // an hour-long outage left thousands, and a MaxListenersExceededWarning on stderr (not JSON) at the eleventh.
  const clock = new ManualClock('2026-03-10T00:00:00Z');
  const abort = new AbortController();
  const lines: { level: number; msg: string; failures?: number; unlogged?: number; error?: string }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const failedLines = () => lines.filter((l) => l.msg === 'wake-up connection failed');
  const listening = listenForWakeups('postgres://postgres@127.0.0.1:1/none', ['scheduler_runs_finished'], () => {}, logger, abort.signal, clock);
  const start = clock.now().getTime();
  let attempts = 0;
  while (attempts < 60) {
    // Each attempt is refused at once and then sleeps its back-off on the clock; wake it.
    await eventually(() => expect(clock.nextWake()).toBeDefined());
    attempts++;
    expect(getEventListeners(abort.signal, 'abort').length).toBeLessThanOrEqual(1);
    clock.advance(clock.nextWake()!.getTime() - clock.now().getTime());
  }
  const minutes = (clock.now().getTime() - start) / 60_000;
  expect(failedLines()[0]).toMatchObject({ level: 40, failures: 1, error: expect.stringContaining('ECONNREFUSED') });
  // Expected through an outage: why in words, no stack trace.
  expect(failedLines()[0]).not.toHaveProperty('err');
  expect(failedLines().length).toBeLessThanOrEqual(1 + Math.ceil(minutes));
  abort.abort();
  await listening;
  expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
});
