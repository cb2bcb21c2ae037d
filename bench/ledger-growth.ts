import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { seedHistory, vacuumAnalyze } from './lib/history.js';
import { reset, timeEscalationPass, timeEvaluation, timeScrape, timeTickLateness, watermark, type Watermark } from './lib/ledger-workload.js';
import { freshDatabase, type BenchDatabase } from './lib/postgres.js';
import { measureRetentionPass } from './lib/retention-pass.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { median, round } from './lib/stats.js';

/**
 * Benchmark 7 (issue 15): does the engine cost the same on a ledger years
 * old as on a new one? Two databases with the same workflows (every 5
 * minutes, half managed, half observed, 10 tenants): one with no history,
 * one holding `historyTicks` settled ticks of each (1 million runs in quick
 * mode, 10 million with --full) with the alerts, events and notifications of
 * their incidents, both VACUUM ANALYZEd. Each repeat measures, on one and
 * then the other, from the same state: evaluation throughput (a batch of
 * fresh ticks through the poller and evaluator), then `pairs` times, in
 * alternating order: tick lateness (every managed workflow due at one
 * boundary), one escalation-clock pass, and a /metrics scrape (median of 5).
 * The ratio is full ÷ empty in cost (time, or 1 / throughput), taken pair by
 * pair so the machine's load moves both sides alike; the figure is the median.
 *
 * Then one retention pass over a month of data at 10,000 workflows
 * (bench/lib/retention-pass.ts).
 */
const NAME = 'ledger growth';
const SIZES = {
  smoke: { workflows: 100, historyTicks: 100, evalTicks: 4, repeats: 1, pairs: 1, retention: { workflows: 200, everyHours: 24 } },
  quick: { workflows: 1_000, historyTicks: 1_000, evalTicks: 4, repeats: 3, pairs: 3, retention: { workflows: 10_000, everyHours: 12 } },
  full: { workflows: 5_000, historyTicks: 2_000, evalTicks: 4, repeats: 5, pairs: 3, retention: { workflows: 10_000, everyHours: 1 } },
};
const HISTORY_END = new Date('2026-03-10T00:00:00Z');
const BOUNDARY = new Date(HISTORY_END.getTime() + 3_600_000);

interface Ledger {
  label: 'empty' | 'full';
  database: BenchDatabase;
  mark: Watermark;
}

interface Sample {
  evaluationRunsPerSecond: number;
  latenessP99: number;
  latenessP50: number;
  escalationMs: number;
  scrapeMs: number;
}

export async function ledgerGrowth(ctx: BenchContext): Promise<Figure[]> {
  const size = { ...SIZES[ctx.size], ...(ctx.repeats ? { repeats: ctx.repeats } : {}) };
  const ledgers: Ledger[] = [];
  try {
    for (const label of ['empty', 'full'] as const) {
      const database = await freshDatabase(ctx.adminUrl, `ledger_${label}`);
      ledgers.push({ label, database, mark: { runs: 0, alerts: 0, events: 0, notifications: 0 } });
      await seedLedgerWorkflows(database.db, size.workflows);
    }
    const t0 = performance.now();
    const loaded = await seedHistory(ledgers[1]!.database, { end: HISTORY_END, ticks: size.historyTicks, stepMinutes: 5 });
    const loadSeconds = (performance.now() - t0) / 1000;
    ctx.log(`  ${NAME}: history loaded in ${Math.round(loadSeconds)} s: ${JSON.stringify(loaded)}`);
    for (const l of ledgers) {
      await vacuumAnalyze(l.database);
      l.mark = await watermark(l.database.db);
    }
    const sizes = await Promise.all(ledgers.map((l) => databaseSize(l.database.db)));
    const samples: Record<Ledger['label'], Partial<Sample>[]> = { empty: [], full: [] };
    // One unmeasured round first: the process's cron and profile caches, and each database's pages, warm alike.
    for (const l of ledgers) await measureClocks(l);
    for (let r = 0; r < size.repeats; r++) {
      for (const l of r % 2 ? [...ledgers].reverse() : ledgers) {
        await reset(l.database.db, l.mark);
        const evaluation = await timeEvaluation(l.database.db, HISTORY_END, size.evalTicks);
        samples[l.label].push({ evaluationRunsPerSecond: evaluation.runsPerSecond });
      }
      // The cheap ones in pairs, alternating which ledger goes first, so a change in the machine's load between two measurements falls on both sides.
      for (let p = 0; p < size.pairs; p++) {
        for (const l of p % 2 ? [...ledgers].reverse() : ledgers) {
          const s = await measureClocks(l);
          samples[l.label].push(s);
          ctx.log(`  ${NAME}: ${l.label} ledger, repeat ${r + 1}.${p + 1}: ${JSON.stringify(mapValues(s, (v) => round(v, 1)))}`);
        }
      }
    }
    const params = { workflows: size.workflows, managed: size.workflows / 2, historyRuns: loaded.runs, history: loaded, historyLoadSeconds: round(loadSeconds, 0), databaseBytes: { empty: sizes[0], full: sizes[1] }, repeats: size.repeats, pairsPerRepeat: size.pairs, evaluatedRuns: size.workflows * size.evalTicks };
    const out: Figure[] = [];
    const each = (key: keyof Sample, name: string, unit: string, cost: (empty: number, full: number) => number) => {
      const of = (label: Ledger['label']) => samples[label].flatMap((s) => (s[key] === undefined ? [] : [s[key]]));
      for (const label of ['empty', 'full'] as const) {
        const xs = of(label);
        out.push(figure(NAME, `${name}, ${label} ledger`, round(median(xs), 1), unit, { ...params, samples: xs.map((x) => round(x, 1)) }));
      }
      const empty = of('empty');
      const ratios = of('full').map((f, i) => cost(empty[i]!, f));
      out.push(figure(NAME, `ratio full / empty: ${name}`, round(median(ratios), 2), 'x', { samples: ratios.map((x) => round(x, 2)), measured: 'cost on the full ledger over cost on the empty one, measured back to back (alternating which goes first); median of the pairs' }, '<= 1.2'));
    };
    each('evaluationRunsPerSecond', 'evaluation throughput', 'runs/s', (empty, full) => empty / full);
    each('latenessP99', 'tick lateness p99', 'ms', (empty, full) => full / Math.max(empty, 1));
    each('escalationMs', 'escalation pass', 'ms', (empty, full) => full / Math.max(empty, 0.1));
    each('scrapeMs', '/metrics scrape', 'ms', (empty, full) => full / Math.max(empty, 0.1));
    for (const l of ledgers.splice(0)) await l.database.drop();
    out.push(...(await measureRetentionPass(ctx, size.retention)));
    return out;
  } finally {
    for (const l of ledgers) await l.database.drop();
  }
}

async function seedLedgerWorkflows(db: Db, workflows: number): Promise<void> {
  await seedTenants(db, 10);
  await seedWorkflows(db, { count: workflows, tenants: 10 });
  await sql`update workflows set mode = 'managed', launcher = '{"kind": "command", "command": "true"}' where id % 2 = 0`.execute(db);
}

async function measureClocks(l: Ledger): Promise<Omit<Sample, 'evaluationRunsPerSecond'>> {
  const db = l.database.db;
  await reset(db, l.mark);
  const ticks = await timeTickLateness(db, BOUNDARY);
  await reset(db, l.mark);
  const escalation = await timeEscalationPass(db, BOUNDARY);
  if (escalation.escalated === 0) throw new Error('the escalation pass escalated nothing');
  await reset(db, l.mark);
  const scrape = await timeScrape(db, BOUNDARY);
  if (!/^scheduler_runs\{status="succeeded"\} \d+/m.test(scrape.text) || !/^scheduler_database_up 1$/m.test(scrape.text)) throw new Error('the scrape did not read the ledger');
  return { latenessP99: ticks.p99, latenessP50: ticks.p50, escalationMs: escalation.ms, scrapeMs: scrape.ms };
}

async function databaseSize(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`select pg_database_size(current_database())::float8 as n`.execute(db);
  return rows[0]!.n;
}

function mapValues<T extends object>(o: T, f: (v: number) => number): Record<keyof T, number> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v as number)])) as Record<keyof T, number>;
}
