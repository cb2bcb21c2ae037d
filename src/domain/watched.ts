/**
 * Whether a workflow's finished runs are held against it (evaluated, retried,
 * alerted on). A workflow stops being watched when it is disabled (removed
 * from the file, `enabled: false`, deleted over the API), when its tenant is
 * (removed from the file), or with `monitoring: false`. Its runs are still
 * recorded, and a run that was in flight when it stopped being watched still
 * ends in the ledger, but nothing opens, counts or retries for it: disabling
 * resolved its alert "so nothing is left escalating on a workflow nobody
 * watches", and a late end must not open a new one.
 */
export function isWatched(workflow: { enabled: boolean; monitoring: boolean }, tenant: { enabled: boolean }): boolean {
  return workflow.enabled && workflow.monitoring && tenant.enabled;
}

/**
 * Whether the bot may start a run of a workflow (a tick, a retry, Run now):
 * not once it is disabled or deleted, nor while its tenant is gone, however
 * the request found it (a button on an old root, a request that looked it up
 * just before the DELETE committed). `monitoring: false` still runs.
 */
export function mayStartRuns(workflow: { enabled: boolean }, tenant: { enabled: boolean }): boolean {
  return workflow.enabled && tenant.enabled;
}

/**
 * Why a scheduled tick committed a moment ago (its row `running`, not yet
 * launched) may no longer be launched, or undefined when it may: its workflow
 * was paused or disabled, or its tenant disabled, after the tick scheduler
 * claimed it. Such a tick is recorded `skipped` with this note: neither fired
 * nor missed, as the ticks that fall while a workflow is paused are, and
 * nothing counts it. Only scheduled ticks: a Run now is a person's one-off
 * (a paused workflow runs it), refused when disabled before its row is
 * written (`mayStartRuns`).
 */
export function tickHeldBack(workflow: { enabled: boolean; paused: boolean }, tenant: { enabled: boolean }): string | undefined {
  if (!tenant.enabled) return 'not fired: its tenant was disabled before its launch';
  if (!workflow.enabled) return 'not fired: the workflow was disabled before its launch';
  if (workflow.paused) return 'not fired: the workflow was paused before its launch';
  return undefined;
}
