/**
 * The retry budget of one tick (DESIGN.md, core idea 3): the first attempt
 * plus the policy's retries, and only a launcher can start a retry. A
 * workflow without one (observed, reported from outside) gets one attempt a
 * tick, whatever its policy says.
 */
export function attemptsAllowed(retries: number, hasLauncher: boolean): number {
  return 1 + retriesAllowed(retries, hasLauncher);
}

/** The retries a tick gets: the policy's, when there is a launcher to start them. */
export function retriesAllowed(retries: number, hasLauncher: boolean): number {
  return hasLauncher ? retries : 0;
}

/** Whether a failed attempt number `attempt` (1 = the tick's own run) is followed by another. */
export function hasAnotherAttempt(attempt: number, retries: number, hasLauncher: boolean): boolean {
  return attempt < attemptsAllowed(retries, hasLauncher);
}
