/**
 * When a replica is hung rather than waiting on its database: what /healthz
 * (a Kubernetes liveness probe) answers 503 for, so the replica is restarted.
 *
 * A loop is hung when one tick has run for longer than `LOOP_HUNG_MS` without
 * making progress (a long outbox drain reports progress as it goes), while
 * another loop of the same replica finished a tick in the last
 * `LOOP_WORKING_WITHIN_MS`, after the hung tick's last sign of life: the
 * database and the event loop answer, so nothing the bot waits for explains
 * it (every database call gives up within 35 s, every Slack or webhook call
 * within its own timeout). A database outage never makes a replica hung: its
 * ticks fail fast and retry, and no loop finishes a tick meanwhile. A loop
 * between ticks (idle, or backing off after a failure) is not hung either;
 * readiness (/readyz) is the verdict for a loop that fails or falls behind.
 */
export const LOOP_HUNG_MS = 10 * 60_000;
export const LOOP_WORKING_WITHIN_MS = 60_000;

export interface LoopTickRecord {
  name: string;
  /** When the tick under way began; undefined between ticks. */
  tickStartedAt?: Date;
  /** When the last tick finished without an error, or a long tick last made progress. */
  lastTickAt?: Date;
}

export interface HungLoop {
  name: string;
  /** Seconds since the tick began or last made progress. */
  stuckSeconds: number;
}

export function hungLoops(loops: LoopTickRecord[], now: Date): HungLoop[] {
  const at = now.getTime();
  return loops.flatMap((l) => {
    if (!l.tickStartedAt) return [];
    const alive = Math.max(l.tickStartedAt.getTime(), l.lastTickAt?.getTime() ?? -Infinity);
    if (at - alive <= LOOP_HUNG_MS) return [];
    const since = Math.max(alive, at - LOOP_WORKING_WITHIN_MS);
    const othersWork = loops.some((o) => o !== l && o.lastTickAt !== undefined && o.lastTickAt.getTime() > since);
    return othersWork ? [{ name: l.name, stuckSeconds: Math.round((at - alive) / 1000) }] : [];
  });
}
