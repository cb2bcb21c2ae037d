import type { Clock } from '../../src/clock.js';
import type { Launcher } from '../../src/launcher.js';

/** A launcher that starts nothing and records each tick's lateness (`clock` at launch − the tick), in ms. */
export function latenessRecorder(clock: Clock): { launcher: Launcher; lateness: number[] } {
  const lateness: number[] = [];
  const launcher: Launcher = {
    kind: 'bench',
    async launch(ctx) {
      if (ctx.tick) lateness.push(clock.now().getTime() - ctx.tick.getTime());
      return { started: true };
    },
  };
  return { launcher, lateness };
}
