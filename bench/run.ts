import { readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { alertingPeer } from './alerting.js';
import { evaluationThroughput } from './evaluation-throughput.js';
import { clockScale } from './clock-scale.js';
import { failureLatency } from './failure-latency.js';
import { ledgerGrowth } from './ledger-growth.js';
import { replaySpeed } from './replay-speed.js';
import { slackDrain } from './slack-drain.js';
import type { Benchmark, BenchSize, Figure } from './lib/figures.js';
import { startBenchServer } from './lib/postgres.js';

/**
 * `npm run bench` (quick) or `npm run bench -- --full`: every benchmark, each
 * on a fresh database, then a table and bench/results.json.
 * `--only <name>` runs the benchmarks whose key contains <name>.
 */
const BENCHMARKS: Record<string, Benchmark> = {
  throughput: evaluationThroughput,
  latency: failureLatency,
  clocks: clockScale,
  drain: slackDrain,
  replay: replaySpeed,
  alerting: alertingPeer,
  'ledger-growth': ledgerGrowth,
};

const args = process.argv.slice(2);
const size: BenchSize = args.includes('--full') ? 'full' : args.includes('--smoke') ? 'smoke' : 'quick';
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const repeats = args.includes('--repeats') ? Number(args[args.indexOf('--repeats') + 1]) : undefined;
const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));

const started = performance.now();
// Other work on the machine skews absolute figures: the 1/5/15-minute load averages at the start and the end go into the results.
const loadAtStart = loadavg().map((x) => Math.round(x * 10) / 10);
const server = await startBenchServer();
const log = (m: string) => process.stderr.write(`${m}\n`);
const figures: Figure[] = [];
const failures: { benchmark: string; error: string }[] = [];
try {
  for (const [key, bench] of Object.entries(BENCHMARKS)) {
    if (only && !key.includes(only)) continue;
    log(`${key}…`);
    const t0 = performance.now();
    try {
      figures.push(...(await bench({ adminUrl: server.adminUrl, size, repeats, log })));
    } catch (error) {
      failures.push({ benchmark: key, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      log(`  ${key} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    log(`  ${key} took ${Math.round((performance.now() - t0) / 1000)} s`);
  }
} finally {
  await server.stop();
}

const machine = { loadAverage: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 10) / 10) }, cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryMb: Math.round(totalmem() / 2 ** 20), node: process.version, database: server.embedded ? 'embedded PostgreSQL 18 (fsync off)' : 'DATABASE_URL' };
const result = { mode: size, at: new Date().toISOString(), wallSeconds: Math.round((performance.now() - started) / 1000), machine, figures, failures };
if (!only) await writeFile(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
else {
  await writeFile(RESULTS.replace(/results\.json$/, `results-${only}.json`), `${JSON.stringify(result, null, 2)}\n`);
  // A quick or full run of one benchmark also replaces that benchmark's figures in results.json (noting when and under what load), so it keeps every figure's latest measurement.
  if (size !== 'smoke' && failures.length === 0) await mergeIntoResults(result);
}
console.log(renderTable(figures));
console.log(`\n${size} mode, ${result.wallSeconds} s, ${machine.cores} cores, ${machine.memoryMb} MB, load average ${loadAtStart[0]} → ${machine.loadAverage.end[0]}${failures.length ? `; FAILED: ${failures.map((f) => f.benchmark).join(', ')}` : ''}`);
process.exit(failures.length ? 1 : 0);

function renderTable(rows: Figure[]): string {
  const lines = ['| benchmark | figure | value | target | met |', '|---|---|---|---|---|'];
  for (const f of rows) lines.push(`| ${f.benchmark} | ${f.figure} | ${f.value} ${f.unit} | ${f.target ?? ''} | ${f.met === undefined ? '' : f.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

async function mergeIntoResults(partial: { mode: string; at: string; wallSeconds: number; machine: Record<string, unknown>; figures: Figure[] }): Promise<void> {
  let whole: { figures: Figure[]; updates?: unknown[] } & Record<string, unknown>;
  try {
    whole = JSON.parse(await readFile(RESULTS, 'utf8')) as typeof whole;
  } catch {
    return;
  }
  const replaced = new Set(partial.figures.map((f) => f.benchmark));
  const kept = whole.figures.filter((f) => !replaced.has(f.benchmark));
  const firstAt = whole.figures.findIndex((f) => replaced.has(f.benchmark));
  const figures = firstAt < 0 ? [...kept, ...partial.figures] : [...kept.slice(0, firstAt), ...partial.figures, ...kept.slice(firstAt)];
  const updates = [...(whole.updates ?? []), { benchmarks: [...replaced], mode: partial.mode, at: partial.at, wallSeconds: partial.wallSeconds, machine: partial.machine }];
  await writeFile(RESULTS, `${JSON.stringify({ ...whole, figures, updates }, null, 2)}\n`);
}
