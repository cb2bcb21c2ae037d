/**
 * Where a replay of a ledger period has to start, and who a manual run in
 * the ledger is replayed as. `replay --from-db` rebuilds a period through the
 * engine, which knows only what it replays: an alert open when the period
 * starts would otherwise be forgotten (its failures before the period not
 * counted, its opening, severity and escalation deadline lost), so the
 * baseline would not be what really happened.
 */

/** An alert open at the period's start, with the tick its failure streak began after (the last success before it). */
export interface OpenAtStart {
  workflow: string;
  openedAt: Date;
  /** The workflow's last tick that succeeded before the alert opened; null when the ledger holds none. */
  lastSuccessTick: Date | null;
  /** The workflow's first tick in the ledger, where a streak with no success before it began. */
  firstTick: Date | null;
}

export interface ReplayStart {
  start: Date;
  /** The alerts the lead-in rebuilds, and those it could not reach within `maxSpanMs` of `until`. */
  rebuilt: string[];
  cut: string[];
}

/**
 * The replay starts at `since`, or earlier: at the last success before each
 * alert open at `since` (so the evaluator sees the streak that opened it, and
 * it opens, escalates and counts as it did), never more than `maxSpanMs`
 * before `until` (a replay's longest span). An alert whose streak begins
 * before that is named in `cut`: its lead-in is shortened, and it may open
 * later in the replay than it did.
 */
export function replayStart(since: Date, until: Date, open: readonly OpenAtStart[], maxSpanMs: number): ReplayStart {
  const floor = until.getTime() - maxSpanMs;
  let start = since.getTime();
  const rebuilt: string[] = [];
  const cut: string[] = [];
  for (const alert of open) {
    const from = (alert.lastSuccessTick ?? alert.firstTick ?? alert.openedAt).getTime();
    if (from < floor) cut.push(alert.workflow);
    else rebuilt.push(alert.workflow);
    start = Math.min(start, Math.max(from, floor));
  }
  return { start: new Date(Math.min(start, since.getTime())), rebuilt, cut };
}

/** A Slack user id as a scenario action needs one (U…/W…). */
const SLACK_USER = /^[UW][A-Z0-9_]{1,40}$/;
/** Who a manual run was requested by, as the replay's run-now action: the Slack user, else a stand-in. */
export const REPLAY_OPERATOR = 'U_REPLAY';

export function replayActor(requestedBy: string | null): string {
  return requestedBy && SLACK_USER.test(requestedBy) ? requestedBy : REPLAY_OPERATOR;
}
