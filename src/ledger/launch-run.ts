import type { Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { LaunchContext, LaunchOutcome } from '../launcher.js';
import { takeLaunchLease } from './held-back-launch.js';
import { finishRun } from './runs.js';
import { launchRefusalError } from '../domain/launch-answer.js';

/**
 * Hands a committed `running` row to the workflow's launcher. Never call it
 * inside a transaction. When there is no launcher or the launch is refused, the
 * run ends at once as failed with the reason, so the engine sees it (a refusal
 * before sending worded as permanent, so its tick is not retried). What it
 * did: `launched` (started, or failed at once), `held_back` (its workflow
 * may no longer start it: recorded skipped), `lost` (no longer this replica's).
 */
export async function launchRun(deps: Deps, run: Run, workflow: Workflow, tenant: Pick<Tenant, 'id' | 'name'>, timeoutSeconds: number): Promise<'launched' | 'held_back' | 'lost'> {
  // The last look before anything starts. The row was committed a moment ago, or a long one: a replica that
  // stalled after its commit (a GC pause, a frozen VM, a stalled connection) for longer than the lease may find
  // the run failed as "worker lost" and its next attempt launched by another replica. Only a row still running
  // and still this replica's is launched; the lease taken here gives the launch a whole lease period.
  // Its workflow paused or disabled (its tenant disabled) since the row was written: recorded skipped, not launched (held-back-launch.ts).
  const look = await takeLaunchLease(deps, run, deps.clock.now());
  if (look !== 'taken') {
    if (look === 'lost') deps.logger.warn({ runId: run.id, workflowId: workflow.id, attempt: run.attempt }, 'run not launched: it ended or became another replica\'s while this replica stalled');
    else deps.logger.info({ runId: run.id, workflowId: workflow.id, tick: run.tick, trigger: run.trigger, note: look.heldBack }, 'run not launched: its workflow may no longer start it');
    return look === 'lost' ? 'lost' : 'held_back';
  }
  const launcher = deps.launchers(workflow);
  if (!launcher) {
    await finishRun(deps, run.id, { status: 'failed', error: 'no launcher configured for this workflow' });
    return 'launched';
  }
  const ctx: LaunchContext = { runId: run.id, workflow, tenant, tick: run.tick, attempt: run.attempt, trigger: run.trigger, timeoutSeconds };
  let outcome: LaunchOutcome;
  try {
    outcome = await launcher.launch(ctx);
  } catch (error) {
    outcome = { started: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (!outcome.started) await finishRun(deps, run.id, { status: 'failed', error: 'refusal' in outcome ? launchRefusalError(outcome.refusal) : `launch failed: ${outcome.error}` });
  return 'launched';
}
