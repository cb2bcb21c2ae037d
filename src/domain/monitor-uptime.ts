/**
 * Whether the bot itself watched a span of time (DESIGN.md, core idea 8:
 * the monitor's own downtime must not page). Each replica's life is one
 * span, from its first heartbeat to its last; a replica is taken to be
 * alive until `slackMs` after it was last seen (a beat that is late, a
 * restart that takes a few seconds).
 *
 * An observed tick's report may arrive at any moment from the tick to the
 * end of its grace. When no replica was alive for part of that, a report
 * sent then reached nobody, and the silence is the bot's, not the job's: the
 * tick is not watched (skipped, never missed). Being up at the tick alone
 * is not enough: a nightly with half an hour of grace whose report came at
 * 02:20, while every replica was down from 02:05 to 02:40, would page.
 */

export interface UptimeSpan {
  startedAt: Date;
  lastSeenAt: Date;
}

/** Did the replicas' spans, each extended by `slackMs`, together cover every instant of [from, to]? */
export function watchedThroughout(spans: readonly UptimeSpan[], from: Date, to: Date, slackMs: number): boolean {
  const sorted = [...spans].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  // Every instant from `from` up to here is covered; this one too once a span reaches it.
  let reached = from.getTime();
  for (const span of sorted) {
    if (span.startedAt.getTime() > reached) return false; // nobody alive just after `reached`
    const end = span.lastSeenAt.getTime() + slackMs;
    if (end < reached) continue;
    if (end >= to.getTime()) return true;
    reached = end;
  }
  return false;
}
