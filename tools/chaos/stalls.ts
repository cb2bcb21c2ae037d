import { sql } from 'kysely';
import { systemClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connect.js';

/**
 * Liveness, measured: while a scenario runs, the ledger is sampled every
 * half second for the oldest thing that is waiting on the bot although it
 * could go ahead, and for how long:
 *
 * - a due tick: an enabled managed workflow whose next_tick_at has passed;
 * - a finished run no poller has evaluated (waiting since it was recorded
 *   finished);
 * - a pending notification at the head of its destination, due, not leased
 *   and whose channel's pace allows it.
 *
 * Time the database was down (a restart the scenario made) does not count:
 * nothing can move then. The longest stall is the largest such wait seen.
 */
export interface Stall {
  seconds: number;
  what: string;
  /** Which one (a workflow, a run id, a notification and its destination), for the post-mortem. */
  ref?: string;
}

export class StallMonitor {
  private readonly down: { from: number; to?: number }[] = [];
  longest: Stall = { seconds: 0, what: 'nothing waited' };
  /** The last sample's waits, by what waited (seconds). */
  current: Record<string, number> = {};
  private stopping = false;
  private running?: Promise<void>;

  constructor(private readonly db: Db) {}

  start(): void {
    this.running = (async () => {
      while (!this.stopping) {
        await this.sample().catch(() => {});
        await systemClock.sleep(500);
      }
    })();
  }

  async stop(): Promise<Stall> {
    this.stopping = true;
    await this.running;
    return this.longest;
  }

  databaseDown(): void {
    this.down.push({ from: systemClock.now().getTime() });
  }

  databaseUp(): void {
    const last = this.down.at(-1);
    if (last && last.to === undefined) last.to = systemClock.now().getTime();
  }

  /** Milliseconds of [from, to] during which the database was down. */
  private downWithin(from: number, to: number): number {
    return this.down.reduce((sum, d) => sum + Math.max(0, Math.min(to, d.to ?? to) - Math.max(from, d.from)), 0);
  }

  private async sample(): Promise<void> {
    if (this.down.some((d) => d.to === undefined)) return;
    const { rows } = await sql<{ what: string; since: Date | null; now: Date; ref: string }>`
      (select 'due tick' as what, w.next_tick_at as since, now() as now, w.tenant_id || '/' || w.name as ref
        from workflows w join tenants t on t.id = w.tenant_id
        where w.enabled and not w.paused and w.mode = 'managed' and t.enabled and w.next_tick_at <= now()
        order by 2 limit 1)
      union all
      (select 'finished run not evaluated', greatest(r.created_at, coalesce(r.finished_at, r.created_at)), now(), 'run ' || r.id
        from runs r
        where r.processed_at is null and r.status in ('succeeded', 'failed', 'missed')
        order by 2 limit 1)
      union all
      (select 'notification not sent', greatest(n.created_at, n.next_attempt_at, coalesce(n.lease_expires_at, n.created_at), coalesce(p.next_at, n.created_at)), now(),
          'notification ' || n.id || ' ' || n.status || ' to ' || n.destination
        from notifications n left join pace_slots p on p.key = n.destination
        where n.status in ('pending', 'sending')
          and n.next_attempt_at <= now()
          and (n.lease_expires_at is null or n.lease_expires_at <= now())
          and (p.next_at is null or p.next_at <= now())
          and not exists (
            select 1 from notifications e
            where e.destination = n.destination and e.id < n.id and e.status in ('pending', 'sending')
          )
        order by 2 limit 1)
    `.execute(this.db);
    this.current = {};
    for (const row of rows) {
      if (!row.since) continue;
      const to = new Date(row.now).getTime();
      const from = new Date(row.since).getTime();
      const seconds = (to - from - this.downWithin(from, to)) / 1000;
      this.current[`${row.what} (${row.ref})`] = Math.round(seconds * 10) / 10;
      if (seconds > this.longest.seconds) this.longest = { seconds, what: row.what, ref: row.ref };
    }
  }
}
