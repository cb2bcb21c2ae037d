/**
 * When the freshness detector may fail a `running` attempt past its deadline
 * (DESIGN.md, core idea 8). Pure: `now` is a parameter.
 *
 * A run nobody supervises (a callback launch after it was accepted, a run
 * reported from outside) is failed "timed out" at its deadline: nothing else
 * would end it. A run a live replica supervises (it holds an unexpired lease:
 * a command under its watchdog, a sync request in flight) is that replica's
 * to end at the same timeout: the watchdog ends the process group (TERM, then
 * KILL after the grace) and reports the run with its output tail and the one
 * error its timeout gives ("timed out after 60s (process group terminated)").
 * Failed under it at the deadline, the run would lose its output, carry a
 * different error (another error group) depending on which replica looked
 * first, and be retried while the attempt it replaces was still running. So
 * a supervised run gets `SUPERVISED_OVERRUN_MS` past its deadline before the
 * detector fails it anyway, as a backstop for a supervisor that is alive but
 * stuck; a supervisor that died loses its lease and the run is failed then.
 */

/** Longer than the kill grace (5 s), the reap and drain after it, and a report's retries, with room for a launch that started late. */
export const SUPERVISED_OVERRUN_MS = 60_000;

/**
 * A running attempt past its deadline is failed "timed out" at once when it
 * has no live lease; with one, only when its deadline is at or before this.
 */
export function supervisedDeadlineCutoff(now: Date): Date {
  return new Date(now.getTime() - SUPERVISED_OVERRUN_MS);
}
