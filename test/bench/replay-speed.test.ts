import { it } from 'vitest';
import { replaySpeed } from '../../bench/replay-speed.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('replay speed: a short synthetic scenario replays through the real engine and reports its wall time', async () => {
  expectWellFormed(await replaySpeed(smokeContext()), 'replay speed', ['wall time, 2 h × 4 workflows']);
}, 120_000);
