import { replayScenario } from '../src/replay/replay-scenario.js';
import { syntheticScenario } from '../src/replay/synthetic-scenario.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { median, round } from './lib/stats.js';

/**
 * Benchmark 5: the replay command's engine (issue 6) over 24 hours of 40
 * five-minute workflows with incidents (its synthetic scenario: 11,520
 * ticks, one incident per tenant), on a fresh database each repeat. Wall time
 * includes the whole replay (engine loops on a virtual clock, the real Slack
 * transport against the recording Slack API), not the database set-up.
 */
const NAME = 'replay speed';
const SIZES = { smoke: { workflows: 4, hours: 2, repeats: 1 }, quick: { workflows: 40, hours: 24, repeats: 1 }, full: { workflows: 40, hours: 24, repeats: 3 } };

export async function replaySpeed(ctx: BenchContext): Promise<Figure[]> {
  const size = { ...SIZES[ctx.size], ...(ctx.repeats ? { repeats: ctx.repeats } : {}) };
  const walls: number[] = [];
  let detail: Record<string, unknown> = {};
  for (let r = 0; r < size.repeats; r++) {
    const database = await freshDatabase(ctx.adminUrl, 'replay');
    try {
      const scenario = syntheticScenario({ workflows: size.workflows, hours: size.hours });
      const t0 = performance.now();
      const result = await replayScenario(scenario, { db: database.db });
      walls.push((performance.now() - t0) / 1000);
      detail = { instants: result.instants, phaseMs: Object.fromEntries(Object.entries(result.phaseMs).map(([k, v]) => [k, Math.round(v)])), transcript: result.transcript.summary };
      ctx.log(`  ${NAME}: ${round(walls.at(-1)!, 1)} s`);
    } finally {
      await database.drop();
    }
  }
  const params = { workflows: size.workflows, hours: size.hours, cron: '*/5 * * * *', ticks: size.workflows * size.hours * 12, repeats: size.repeats, samples: walls.map((w) => round(w, 1)), ...detail };
  return [figure(NAME, `wall time, ${size.hours} h × ${size.workflows} workflows`, round(median(walls), 1), 's', params, size.hours === 24 && size.workflows === 40 ? '< 30' : undefined)];
}
