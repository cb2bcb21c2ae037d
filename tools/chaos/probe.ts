import { appendFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connect.js';
import type { ReplicaSet } from './replicas.js';

/**
 * A post-mortem recorder for a chaos scenario (only with CHAOS_LOG_DIR): once
 * a second it writes one JSON line to `probe.log` with what each party was
 * doing, so that a stall can be traced to whoever held it up:
 *
 * - the driver's own event-loop lag (a late timer: the driver is starved);
 * - what the stall monitor last saw waiting, and for how long;
 * - each replica's /readyz: how long it took, and each loop's failures and
 *   seconds since its last tick;
 * - the bot's sessions in pg_stat_activity, by state and wait event, and how
 *   long a `select 1` from the driver took;
 * - the kernel wait channel of every PostgreSQL and replica process: a
 *   process in `pipe_write` is blocked writing its log to a full pipe.
 *
 * `event()` adds a line for a fault the scenario injects.
 */
export class Probe {
  private stopping = false;
  private running?: Promise<void>;

  constructor(
    private readonly file: string,
    private readonly db: Db,
    private readonly replicas: ReplicaSet,
    private readonly database: string,
    private readonly clusterDir?: string,
    private readonly waits?: () => Record<string, number>,
  ) {}

  static fromEnv(o: { db: Db; replicas: ReplicaSet; database: string; scenario: string; clusterDir?: string; waits?: () => Record<string, number> }): Probe | undefined {
    const dir = process.env.CHAOS_LOG_DIR;
    return dir ? new Probe(join(dir, `probe-${o.scenario.replace(/[^a-z]+/g, '-')}.log`), o.db, o.replicas, o.database, o.clusterDir, o.waits) : undefined;
  }

  event(what: string, detail: Record<string, unknown> = {}): void {
    this.write({ event: what, ...detail });
  }

  start(): void {
    const every = async (ms: number, what: (lagMs: number) => Promise<void>) => {
      while (!this.stopping) {
        const planned = performance.now();
        await systemClock.sleep(ms);
        await what(Math.round(performance.now() - planned - ms)).catch((error: Error) => this.write({ probeError: error.message }));
      }
    };
    this.running = Promise.all([
      every(1_000, async (lagMs) => {
        const [replicas, sessions] = await Promise.all([this.readiness(), this.sessions()]);
        this.write({ lagMs, waits: this.waits?.(), replicas, ...sessions });
      }),
      every(500, async () => {
        const blocked = await blockedProcesses(this.replicas, this.clusterDir);
        if (Object.keys(blocked).length) this.write({ blocked });
      }),
    ]).then(() => {});
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private write(line: Record<string, unknown>): void {
    appendFileSync(this.file, `${JSON.stringify({ at: new Date().toISOString(), ...line })}\n`);
  }

  private async readiness() {
    return Promise.all(
      this.replicas.replicas.map(async (r) => {
        if (!r.ready) return { name: r.name, up: false };
        const started = performance.now();
        const res = await fetch(`${r.url}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch((e: Error) => e);
        const ms = Math.round(performance.now() - started);
        if (res instanceof Error) return { name: r.name, ms, error: res.name };
        const body = (await res.json().catch(() => ({}))) as { database?: string; loops?: { name: string; lastTickAt: string | null; failures: number }[] };
        const now = Date.now();
        const stale = (body.loops ?? [])
          .map((l) => ({ loop: l.name, failures: l.failures, age: l.lastTickAt ? Math.round((now - Date.parse(l.lastTickAt)) / 1000) : null }))
          .filter((l) => l.failures > 0 || l.age === null || l.age > 5);
        return { name: r.name, ms, status: res.status, database: body.database, stale };
      }),
    );
  }

  private async sessions() {
    const started = performance.now();
    try {
      const { rows } = await sql<{ app: string; state: string | null; wait: string | null; n: number }>`
        select application_name as app, state, coalesce(wait_event_type || ':' || wait_event, '') as wait, count(*)::int as n
        from pg_stat_activity where datname = ${this.database}
        group by 1, 2, 3 order by 4 desc
      `.execute(this.db);
      return { selectMs: Math.round(performance.now() - started), sessions: rows.map((r) => `${r.app}/${r.state}/${r.wait}=${r.n}`) };
    } catch (error) {
      return { selectMs: Math.round(performance.now() - started), sessionsError: (error as Error).message };
    }
  }
}

/**
 * The threads of the replicas and of our PostgreSQL server that are not in
 * an ordinary idle wait, by process, state and kernel wait channel: `R` is
 * waiting for a CPU, `pipe_write` or `unix_stream_*` is blocked writing to
 * a full log pipe.
 */
async function blockedProcesses(replicas: ReplicaSet, clusterDir: string | undefined): Promise<Record<string, number>> {
  const pids = new Map<number, string>();
  for (const r of replicas.replicas) if (r.process?.pid) pids.set(r.process.pid, r.name);
  // Our server's postmaster and its children only: other PostgreSQL servers may run on the machine.
  const postmaster = clusterDir ? Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]) : NaN;
  if (postmaster > 0) {
    pids.set(postmaster, 'postgres');
    const children = await readFile(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').catch(() => '');
    for (const pid of children.split(' ').filter(Boolean)) pids.set(Number(pid), 'postgres');
  }
  const counts: Record<string, number> = {};
  for (const [pid, who] of pids) {
    for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
      // pid (comm) state …: comm may hold spaces, so read after its closing parenthesis.
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      const wchan = (await readFile(`/proc/${pid}/task/${tid}/wchan`, 'utf8').catch(() => '')).trim();
      const main = tid === String(pid);
      if (state === 'S' && /^(do_epoll_wait|ep_poll|do_select|do_sys_poll|hrtimer_nanosleep|do_nanosleep|unix_stream_read_generic|pipe_read|sk_wait_data|wait_woken)$/.test(wchan)) continue;
      if (state === 'S' && !main && /^futex/.test(wchan)) continue;
      if (!state || state === 'Z') continue;
      const key = `${who}${main ? '' : '/thread'}:${state}:${wchan}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return counts;
}
