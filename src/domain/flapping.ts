/**
 * Flapping (DESIGN.md core idea 7, issue 8): a workflow that alternates
 * success and failure would otherwise open and resolve one alert per flip
 * when its rule resolves on one success (daily and rarer cadences). Instead,
 * while the recent history flips often, an open alert asks for more
 * successes in a row before it resolves (adaptive hysteresis), and the
 * thread is told once.
 *
 * The facts are the workflow's newest confirmed tick outcomes (original rows
 * with a tick; skipped ticks and retry attempts excluded, missed ticks count
 * as failures), newest first, the same rows the failure count walks.
 */

/** How many of the newest tick outcomes are looked at. */
export const FLAP_WINDOW = 10;
/** Success↔failure changes within the window that make a workflow flapping. */
export const FLAP_TRANSITIONS = 3;
/** Successes in a row an open alert needs while flapping, at least (a policy asking for more wins). */
export const FLAP_RECOVER_AFTER = 3;

export type TickOutcome = 'success' | 'failure';

/** Number of success↔failure changes among the newest FLAP_WINDOW outcomes (newest first). */
export function countTransitions(outcomes: readonly TickOutcome[]): number {
  const window = outcomes.slice(0, FLAP_WINDOW);
  let changes = 0;
  for (let i = 1; i < window.length; i++) if (window[i] !== window[i - 1]) changes++;
  return changes;
}

export function isFlapping(transitions: number): boolean {
  return transitions >= FLAP_TRANSITIONS;
}

/** The consecutive successes an open alert needs to resolve, given how the workflow has been behaving. */
export function effectiveRecoverAfter(recoverAfter: number, flapping: boolean): number {
  return flapping ? Math.max(recoverAfter, FLAP_RECOVER_AFTER) : recoverAfter;
}

/** Failures among the recent window, at least, that open an alert for a flapping workflow below `alertAfter` in a row. */
export function intermittentThreshold(alertAfter: number): number {
  return Math.max(Math.ceil(FLAP_WINDOW / 2), alertAfter);
}

/**
 * What the intermittent rule adds to a policy, for people reading it: the
 * failures among the last FLAP_WINDOW runs that open an alert while the
 * workflow flaps, or null where the rule can never open one before
 * `alertAfter` in a row does (alertAfter 1, or a threshold flapping cannot
 * reach: FLAP_TRANSITIONS changes with the newest run a failure need
 * ceil(FLAP_TRANSITIONS / 2) successes in the window).
 */
export function intermittentRuleOf(alertAfter: number): { failures: number; window: number } | null {
  const failures = intermittentThreshold(alertAfter);
  const reachable = FLAP_WINDOW - Math.ceil(FLAP_TRANSITIONS / 2);
  return alertAfter > 1 && failures <= reachable ? { failures, window: FLAP_WINDOW } : null;
}

/**
 * Failing intermittently: with no alert open, the newest outcome a failure,
 * a workflow that alternates never reaches `alertAfter` failures in a row
 * (a 5-minute job failing every other tick, 144 failures a day). When it
 * flaps and at least half the window (or `alertAfter`, a policy asking for
 * more keeps control) failed, an alert opens all the same. The counts, or
 * null when the rule does not hold.
 */
export function failingIntermittently(
  outcomes: readonly TickOutcome[],
  alertAfter: number,
): { failures: number; window: number; transitions: number } | null {
  const window = outcomes.slice(0, FLAP_WINDOW);
  if (window[0] !== 'failure') return null;
  const transitions = countTransitions(window);
  const failures = window.filter((o) => o === 'failure').length;
  if (!isFlapping(transitions) || failures < intermittentThreshold(alertAfter)) return null;
  return { failures, window: window.length, transitions };
}
