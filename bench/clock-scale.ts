import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { round } from './lib/stats.js';

/**
 * Benchmark 3: the clocks at 1,000 / 10,000 / 100,000 workflows. Mixed
 * cadences (a sixth fire every minute, the rest every 5 or 15 minutes,
 * hourly, nightly, weekdays), half managed, half observed; 5% have an open
 * warning (a tenth of those past their escalation deadline); 1% of the
 * observed ones are ten minutes behind (two missed ticks each). Measured in a
 * replica process of its own: tick-scheduler lateness at the minute boundary
 * where every `* * * * *` workflow fires, one escalation-clock pass, one
 * freshness pass, and the process's peak RSS. Each size on a fresh database.
 */
const NAME = 'clock scale';
const SIZES = { smoke: [300], quick: [1_000, 10_000], full: [1_000, 10_000, 100_000] };
const BOUNDARY = new Date('2026-03-10T12:00:00Z');
const CHILD = fileURLToPath(new URL('./clocks-process.ts', import.meta.url));

interface Measured {
  fired: number;
  latenessP50: number;
  latenessP99: number;
  escalationMs: number;
  freshnessMs: number;
  rssPeakBytes: number;
}

export async function clockScale(ctx: BenchContext): Promise<Figure[]> {
  const out: Figure[] = [];
  const bySize = new Map<number, Measured>();
  for (const n of SIZES[ctx.size]) {
    const m = await measure(ctx, n);
    bySize.set(n, m);
    ctx.log(`  ${NAME} @${n}: ${JSON.stringify(m)}`);
    const p = { workflows: n, everyMinute: Math.floor(n / 6), openAlerts: Math.floor(n / 20), dueEscalations: Math.floor(n / 200), behindObserved: Math.floor(n / 200), fired: m.fired };
    const at100k = n === 100_000;
    out.push(figure(NAME, `tick lateness p99 @${n}`, round(m.latenessP99, 0), 'ms', p, at100k ? '< 1000' : undefined));
    out.push(figure(NAME, `tick lateness p50 @${n}`, round(m.latenessP50, 0), 'ms', p));
    out.push(figure(NAME, `escalation pass @${n}`, round(m.escalationMs, 0), 'ms', p, at100k ? '< 2000' : undefined));
    out.push(figure(NAME, `freshness pass @${n}`, round(m.freshnessMs, 0), 'ms', p, at100k ? '< 2000' : undefined));
    out.push(figure(NAME, `replica RSS @${n}`, round(m.rssPeakBytes / 2 ** 20, 0), 'MB', p, at100k ? '< 250' : undefined));
  }
  // Growth per 10× workflows: 10 or less is linear or better.
  const sizes = [...bySize.keys()];
  for (let i = 1; i < sizes.length; i++) {
    const [a, b] = [bySize.get(sizes[i - 1]!)!, bySize.get(sizes[i]!)!];
    const g = (x: number, y: number) => round(y / Math.max(x, 1), 1);
    const p = { from: sizes[i - 1], to: sizes[i], note: 'value ratio for 10x the workflows; <= 10 is linear or better' };
    out.push(figure(NAME, `growth ${sizes[i - 1]}→${sizes[i]}: lateness p99`, g(a.latenessP99, b.latenessP99), 'x', p, '<= 10'));
    out.push(figure(NAME, `growth ${sizes[i - 1]}→${sizes[i]}: escalation pass`, g(a.escalationMs, b.escalationMs), 'x', p, '<= 10'));
    out.push(figure(NAME, `growth ${sizes[i - 1]}→${sizes[i]}: freshness pass`, g(a.freshnessMs, b.freshnessMs), 'x', p, '<= 10'));
    out.push(figure(NAME, `growth ${sizes[i - 1]}→${sizes[i]}: RSS`, g(a.rssPeakBytes, b.rssPeakBytes), 'x', p, '<= 10'));
  }
  return out;
}

async function measure(ctx: BenchContext, n: number): Promise<Measured> {
  const database = await freshDatabase(ctx.adminUrl, `clocks_${n}`);
  const { db, url } = database;
  try {
    const tenants = Math.max(1, Math.floor(n / 100));
    await seedTenants(db, tenants);
    const B = BOUNDARY.toISOString();
    await seedWorkflows(db, {
      count: n,
      tenants,
      cronSql: sql`(array['* * * * *', '*/5 * * * *', '*/15 * * * *', '0 * * * *', '0 2 * * *', '30 9 * * 1-5'])[1 + g % 6]`,
      // every-minute ones (g % 6 = 0) and odd g are managed
      mode: 'managed',
      launcher: { kind: 'command', command: 'true' },
      nextTickSql: sql`case when g % 6 = 0 then ${B}::timestamptz else ${B}::timestamptz + interval '1 hour' end`,
    });
    await sql`
      update workflows set mode = 'observed', launcher = null,
        cron = case when id % 200 = 1 then '*/5 * * * *' else cron end,
        next_tick_at = case when id % 200 = 1 then ${B}::timestamptz - interval '10 minutes' else next_tick_at end
      where id % 2 = 1 and id % 6 <> 0
    `.execute(db);
    await sql`
      insert into alerts (workflow_id, generation, status, severity, opened_at, escalate_at, cadence_seconds, policy, consecutive_failures,
                          last_error, error_group, error_group_first_at, error_group_last_at, error_group_count, updated_at)
      select id, 1, 'open', 'warning', ${B}::timestamptz - interval '1 hour',
        case when id % 200 = 0 then ${B}::timestamptz - interval '1 minute' else ${B}::timestamptz + interval '1 day' end,
        300, '{"escalateAfterFailures": 100}', 3, 'connection refused', 'g1', ${B}, ${B}, 3, ${B}
      from workflows where id % 20 = 0
    `.execute(db);
    await sql`analyze`.execute(db);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from workflows where next_tick_at = ${B}::timestamptz and mode = 'managed'`.execute(db);
    const line = await runChild({ DATABASE_URL: url, BOUNDARY: B, EXPECTED_FIRES: String(rows[0]!.n), PLATFORM_CHANNEL: 'CPLATFORM' });
    return JSON.parse(line) as Measured;
  } finally {
    await database.drop();
  }
}

function runChild(env: Record<string, string>): Promise<string> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', CHILD], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-10_000)));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(line);
      else reject(new Error(`clocks process exited with ${code}:\n${out}\n${err}`));
    });
  });
}
