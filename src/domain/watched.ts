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
 * nothing counts it. A retry and a Run now: `launchHeldBack`.
 */
export function tickHeldBack(workflow: { enabled: boolean; paused: boolean }, tenant: { enabled: boolean }): string | undefined {
  return launchHeldBack('schedule', workflow, tenant)?.note;
}

/**
 * Why a run whose row was committed a moment ago may no longer be launched
 * (`launchRun`'s last look), as the note of its row, recorded `skipped`; and,
 * for a retry, the reason its tick's verdict gives (`failed on attempt 1; not
 * retried (the workflow was paused before its retry's launch)`). A tick and a
 * retry are held back by a pause or disable of the workflow, or its tenant
 * disabled, committed since: a paused workflow fires nothing, retries
 * included. A Run now is a person's one-off, which a paused workflow runs
 * (docs/alerts.md): only a disable committed after the click holds it back,
 * as a click a moment later is refused (`mayStartRuns`).
 */
export function launchHeldBack(trigger: string, workflow: { enabled: boolean; paused: boolean }, tenant: { enabled: boolean }): { note: string; verdict: string } | undefined {
  const why = heldBackWhy(workflow, tenant, trigger !== 'manual');
  if (!why) return undefined;
  if (trigger === 'schedule') return { note: `not fired: ${why} before its launch`, verdict: '' };
  if (trigger === 'retry') return { note: `not launched: ${why} before this retry's launch`, verdict: `${why} before its retry's launch` };
  return { note: `not run: ${why} before its launch`, verdict: '' };
}

function heldBackWhy(workflow: { enabled: boolean; paused: boolean }, tenant: { enabled: boolean }, pauseHolds: boolean): string | undefined {
  if (!tenant.enabled) return 'its tenant was disabled';
  if (!workflow.enabled) return 'the workflow was disabled';
  if (pauseHolds && workflow.paused) return 'the workflow was paused';
  return undefined;
}
