import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * A slot row written by a clock more than this far ahead of ours is ignored:
 * our clock went back (a restored VM, a stepped clock) or the writer's is
 * badly skewed, and honouring it could hold a channel for as long as the jump.
 * Replicas whose clocks agree to NTP accuracy never come near it.
 */
const STALE_SLOT_AHEAD_MS = 5_000;

export type SlotResult = { ok: true } | { ok: false; readyAt: Date };

/**
 * When the next delivery under a pacing key may start, shared by every
 * replica through `pace_slots`, with an in-process mirror of what this
 * replica has learnt (so a claim can skip paced destinations without asking
 * the database, and the replay can find the next instant a slot opens).
 *
 * Why a slot is taken only once the previous one's answer is known, rather
 * than handed out an interval after the last one given (`next_at =
 * greatest(next_at, now) + interval`): Slack counts its pace from when a
 * message arrives, which is after the sender's `now`, so a slot given out
 * before the previous answer lets a message land a few milliseconds early,
 * and each such 429 costs a full Retry-After second (it did, 182 times per
 * 1,000 messages, when the pace started at claim time). A taken slot holds
 * the key provisionally until `at + interval`; the answer moves that to
 * `answered + interval` (`hold`). A send slower than the interval can still overlap another
 * replica's next one; Slack then answers 429 and `hold` moves the key for
 * every replica.
 */
export class Pacer {
  private readonly notBefore = new Map<string, number>();
  private readonly destinations = new Map<string, Set<string>>();

  constructor(private readonly db: Db) {}

  /**
   * Takes the slot for `key` starting at `at` (now, or a moment this
   * replica already knows to be free: a pipeline reserves its next slot
   * before sleeping until it, so no round trip sits between the slot opening
   * and the send) if no replica holds it; else says when it is next free
   * (remembered here too).
   */
  async take(key: string, destination: string, now: Date, minIntervalMs: number, at: Date = now): Promise<SlotResult> {
    this.remember(key, destination);
    const local = this.notBefore.get(key) ?? 0;
    if (local > at.getTime()) return { ok: false, readyAt: new Date(local) };
    const next = new Date(at.getTime() + minIntervalMs);
    const staleAfter = new Date(now.getTime() + STALE_SLOT_AHEAD_MS);
    // In a CTE the outer select reads the snapshot from before the upsert: for
    // a refused take that is the row that refused it.
    const { rows } = await sql<{ taken: boolean; ready: Date | null }>`
      with taken as (
        insert into pace_slots (key, next_at, updated_at) values (${key}, ${next}, ${now})
        on conflict (key) do update set next_at = excluded.next_at, updated_at = excluded.updated_at
        where pace_slots.next_at <= ${at} or pace_slots.updated_at > ${staleAfter}
        returning 1
      )
      select exists (select 1 from taken) as taken, (select next_at from pace_slots where key = ${key}) as ready
    `.execute(this.db);
    const row = rows[0]!;
    if (row.taken) {
      this.notBefore.set(key, next.getTime());
      return { ok: true };
    }
    // A concurrent take committed between snapshot and upsert: it holds the slot for at least an instant more.
    const readyAt = Math.max(row.ready ? new Date(row.ready).getTime() : 0, at.getTime() + 1);
    this.notBefore.set(key, Math.max(local, readyAt));
    return { ok: false, readyAt: new Date(readyAt) };
  }

  /**
   * Nothing under `key` before `until`, for every replica: after Slack's
   * answer (`answered + interval`) and on a rate limit (`now + Retry-After`).
   * Never moves a slot earlier, except a stale one (see STALE_SLOT_AHEAD_MS).
   */
  async hold(key: string, destination: string, until: Date, now: Date): Promise<void> {
    this.remember(key, destination);
    this.notBefore.set(key, Math.max(this.notBefore.get(key) ?? 0, until.getTime()));
    const staleAfter = new Date(now.getTime() + STALE_SLOT_AHEAD_MS);
    await sql`
      insert into pace_slots (key, next_at, updated_at) values (${key}, ${until}, ${now})
      on conflict (key) do update set
        next_at = case when pace_slots.updated_at > ${staleAfter} then excluded.next_at else greatest(pace_slots.next_at, excluded.next_at) end,
        updated_at = excluded.updated_at
    `.execute(this.db);
  }

  /** When this replica last knew `key` to be free next. */
  readyAt(key: string): Date | undefined {
    const t = this.notBefore.get(key);
    return t === undefined ? undefined : new Date(t);
  }

  /** The earliest instant after `now` at which a key this replica knows of comes free (a manual clock's driver jumps there). */
  nextFreeAfter(now: Date): Date | undefined {
    let next: number | undefined;
    for (const t of this.notBefore.values()) if (t > now.getTime() && (next === undefined || t < next)) next = t;
    return next === undefined ? undefined : new Date(next);
  }

  /** Destinations whose key this replica knows to be taken at `at` (for a claim to skip). */
  blockedDestinations(at: Date): string[] {
    const out: string[] = [];
    for (const [key, t] of this.notBefore) if (t > at.getTime()) out.push(...(this.destinations.get(key) ?? []));
    return out;
  }

  private remember(key: string, destination: string): void {
    let set = this.destinations.get(key);
    if (!set) this.destinations.set(key, (set = new Set()));
    set.add(destination);
  }
}
