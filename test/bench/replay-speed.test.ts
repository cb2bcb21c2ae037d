import { expect, it } from 'vitest';
import { replaySpeed } from '../../bench/replay-speed.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('replay speed: a short synthetic scenario replays through the real engine and reports its wall time', async () => {
  const figures = await replaySpeed(smokeContext());
  expectWellFormed(figures, 'replay speed', ['wall time, 2 h × 4 workflows']);
  // A wall time is only a measurement if the replay did the work: the engine stepped through the night and Slack heard the incidents.
  const [wall] = figures;
  expect(wall!.value).toBeGreaterThan(0);
  const p = wall!.parameters as { ticks: number; instants: number; samples: number[]; transcript: { alerts: number; roots: number; failedTicks: number } };
  expect(p.ticks).toBe(4 * 2 * 12);
  expect(p.instants).toBeGreaterThan(0);
  expect(p.samples).toHaveLength(1);
  expect(p.transcript.failedTicks).toBeGreaterThan(0);
  expect(p.transcript.alerts).toBeGreaterThan(0);
  expect(p.transcript.roots).toBeGreaterThanOrEqual(p.transcript.alerts);
}, 180_000);
