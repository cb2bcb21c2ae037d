import type { RunTrigger, Tenant, Workflow } from './db/schema.js';
import type { LaunchRefusal } from './domain/launch-answer.js';

/**
 * Starting a run is two steps: a service inserts the run row (status
 * `running`, with its deadline and lease) and commits; then, outside any
 * transaction, the workflow's launcher is asked to start it. The launcher
 * reports the end through the ledger (the same `finishRun` service the API
 * uses), never by return value, so a run outlives the call that started it and
 * a replica that dies leaves a row another replica can fail as "worker lost".
 */
export interface LaunchContext {
  runId: number;
  workflow: Workflow;
  tenant: Pick<Tenant, 'id' | 'name'>;
  tick: Date | null;
  attempt: number;
  trigger: RunTrigger;
  timeoutSeconds: number;
}

/**
 * `refusal`: refused before anything was sent or started, for a reason the
 * same launch would meet again (src/domain/launch-answer.ts; a command's
 * working directory or shell: spawn-failure.ts): the run fails at once and
 * its tick is not retried. `error`: anything else that kept it from starting,
 * retried per the budget.
 */
export type LaunchOutcome = { started: true } | { started: false; error: string } | { started: false; refusal: LaunchRefusal };

export interface Launcher {
  readonly kind: string;
  launch(ctx: LaunchContext): Promise<LaunchOutcome>;
}

/** The launcher for a workflow, or undefined when it has none (observed, no launcher). */
export type LauncherResolver = (workflow: Workflow) => Launcher | undefined;
