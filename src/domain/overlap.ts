/**
 * What a managed workflow's tick does when a run of the workflow is still
 * running as it falls due (Kubernetes' CronJob `concurrencyPolicy`):
 *
 * - `allow` (the default, Kubernetes' `Allow`): the tick fires beside it, and
 *   its row says so ("started while run N … was still running").
 * - `skip` (Kubernetes' `Forbid`): the tick is not fired; its row is
 *   `skipped`, neither a failure nor a success, and names the run it yielded
 *   to. The run still running ends by itself or by its timeout.
 *
 * Kubernetes' `Replace` (end the old run, start the new) is not offered: the
 * old run may be supervised by another replica.
 */

export const OVERLAP_POLICIES = ['allow', 'skip'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** The newest run of the workflow still running when its tick falls due. */
export interface RunStillRunning {
  id: number;
  /** Its tick; null for a manual run. */
  tick: Date | null;
  attempt: number;
}

export type OverlapDecision = { fire: true; note: string | null } | { fire: false; note: string };

export function overlapDecision(policy: OverlapPolicy, running: RunStillRunning | undefined): OverlapDecision {
  if (!running) return { fire: true, note: null };
  const which = runNamed(running);
  if (policy === 'skip') return { fire: false, note: `not fired: ${which} was still running (overlap: skip)` };
  return { fire: true, note: `started while ${which} was still running (overlap: allow)` };
}

/**
 * An observed workflow's tick that no run took by the end of its window,
 * while a run of the workflow was still running at the tick: under `skip` its
 * outside scheduler does not start a run beside one still going (a
 * Kubernetes CronJob's `concurrencyPolicy: Forbid`, cron behind `flock -n`),
 * so the tick is `skipped` with this note, not missed. A job taking 90
 * minutes every hour had every other tick missed, and a job succeeding every
 * run alerted as failing intermittently. Null: the tick is missed as usual
 * (`allow`: a tick is expected to start beside a run still going).
 */
export function observedSkipNote(policy: OverlapPolicy, running: RunStillRunning | undefined): string | null {
  if (policy !== 'skip' || !running) return null;
  return `not run: ${runNamed(running)} was still running (overlap: skip)`;
}

function runNamed(running: RunStillRunning): string {
  return `run ${running.id} (${running.tick ? `tick ${running.tick.toISOString()}` : 'a manual run'}${running.attempt > 1 ? `, attempt ${running.attempt}` : ''})`;
}
