/**
 * How far a replica's clock is from the database's. Every decision uses the
 * replica's own clock (docs/reliability.md, Clocks), and leases written by
 * one replica are judged by another's: run leases tolerate replicas about
 * 45 s apart, the outbox's send cut-off about 12 s. A replica whose clock is
 * off by more than CLOCK_OFFSET_LIMIT_MS says so, once, before it matters.
 *
 * Measured around one statement: the database's time was read somewhere
 * between `before` and `after` on this replica's clock, so the offset is
 * known to within half that span, and only an offset beyond the limit by
 * more than that uncertainty is told (a slow round trip never cries wolf).
 */
export const CLOCK_OFFSET_LIMIT_MS = 5_000;

export interface ClockOffset {
  /** This replica's clock minus the database's: positive when the replica is ahead. */
  offsetMs: number;
  /** Half the round trip: the offset is within this of the truth. */
  uncertaintyMs: number;
}

export function clockOffsetOf(beforeMs: number, databaseMs: number, afterMs: number): ClockOffset {
  const span = Math.max(0, afterMs - beforeMs);
  return { offsetMs: Math.round(beforeMs + span / 2 - databaseMs), uncertaintyMs: Math.ceil(span / 2) };
}

/** Whether the offset is surely beyond the limit, either way. */
export function clockOffBy(o: ClockOffset, limitMs = CLOCK_OFFSET_LIMIT_MS): boolean {
  return Math.abs(o.offsetMs) - o.uncertaintyMs > limitMs;
}

/** Whether the offset is surely back within the limit (between the two, the last verdict stands). */
export function clockBackWithin(o: ClockOffset, limitMs = CLOCK_OFFSET_LIMIT_MS): boolean {
  return Math.abs(o.offsetMs) + o.uncertaintyMs <= limitMs;
}
