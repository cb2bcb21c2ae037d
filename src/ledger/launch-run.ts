import type { Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { LaunchContext, LaunchOutcome } from '../launcher.js';
import { takeRunLease } from './run-leases.js';
import { finishRun } from './runs.js';
import { launchRefusalError } from '../domain/launch-answer.js';

/**
 * Hands a committed `running` row to the workflow's launcher. Never call it
 * inside a transaction. When there is no launcher or the launch is refused, the
 * run ends at once as failed with the reason, so the engine sees it (a refusal
 * before sending worded as permanent, so its tick is not retried).
 */
export async function launchRun(deps: Deps, run: Run, workflow: Workflow, tenant: Pick<Tenant, 'id' | 'name'>, timeoutSeconds: number): Promise<void> {
  // The last look before anything starts. The row was committed a moment ago, or a long one: a replica that
  // stalled after its commit (a GC pause, a frozen VM, a stalled connection) for longer than the lease may find
  // the run failed as "worker lost" and its next attempt launched by another replica. Only a row still running
  // and still this replica's is launched; the lease taken here gives the launch a whole lease period.
  if ((await takeRunLease(deps, run.id, deps.clock.now())) === 0) {
    deps.logger.warn({ runId: run.id, workflowId: workflow.id, attempt: run.attempt }, 'run not launched: it ended or became another replica\'s while this replica stalled');
    return;
  }
  const launcher = deps.launchers(workflow);
  if (!launcher) {
    await finishRun(deps, run.id, { status: 'failed', error: 'no launcher configured for this workflow' });
    return;
  }
  const ctx: LaunchContext = { runId: run.id, workflow, tenant, tick: run.tick, attempt: run.attempt, trigger: run.trigger, timeoutSeconds };
  let outcome: LaunchOutcome;
  try {
    outcome = await launcher.launch(ctx);
  } catch (error) {
    outcome = { started: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (outcome.started) return;
  await finishRun(deps, run.id, { status: 'failed', error: 'refusal' in outcome ? launchRefusalError(outcome.refusal) : `launch failed: ${outcome.error}` });
}
