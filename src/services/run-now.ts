import type { Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { profileFor } from '../domain/cadence.js';
import { mayStartRuns } from '../domain/watched.js';
import { recordAlertEvent } from '../ledger/alert-events.js';
import type { Actor, Scope } from '../ledger/alert-actions.js';
import { insertRunningRun } from '../ledger/runs.js';
import { launchRun } from '../ledger/launch-run.js';
import { UnconfirmedLaunches } from '../engine/unconfirmed-launches.js';

export type RunNowResult =
  /**
   * `paused`: the workflow is paused; the run is a one-off asked for by a person, its schedule stays paused.
   * `toldInThread`: an open alert's thread is told who started it (`run_requested`); else nobody is but the asker.
   */
  | { kind: 'started'; run: Run; paused: boolean; toldInThread: boolean }
  | { kind: 'no_launcher'; workflow: Workflow }
  | { kind: 'already_running'; run: Run }
  | { kind: 'not_found' };

/**
 * Starts a manual run of a workflow for a person (or the API). One
 * transaction locks the workflow (so two clicks start one run), inserts the
 * `running` row with who asked, and tells the open alert's thread; the
 * launcher is called only after commit. A paused workflow runs too (a person
 * asked for this one run, as resuming is a separate ask); the answer says it
 * is paused, so nobody takes the run for a resume. A disable of the workflow
 * or its tenant committed after the click but before the launch holds it
 * back (`launchRun`'s last look): its row is recorded `skipped` (`not run:
 * the workflow was disabled before its launch`) and the answer is
 * `not_found`, as for a click a moment later. When the run ends the poller records
 * `run_finished` on the alert, and a success resolves it the normal way.
 *
 * A COMMIT whose answer is lost (the connection drops as it is sent) may
 * have committed the row: it is looked up at once, on a fresh connection,
 * and launched when found (only this replica launches a row leased to it,
 * so once), rather than left unlaunched for its lease to fail it as "worker
 * lost" while a second click is told it is already running.
 */
export async function requestRunNow(deps: Deps, input: { workflowId: number; actor: Actor; scope: Scope }): Promise<RunNowResult> {
  let decided: Decided;
  try {
    decided = await unconfirmed.commit(deps.replicaId, (keep) => decideRunNow(deps, input, keep));
  } catch (error) {
    const found = await unconfirmed.confirmed(deps).catch(() => []);
    const launched = new Map<number, Awaited<ReturnType<typeof launchRun>>>();
    for (const f of found) launched.set(f.run.id, await launchRun(deps, f.run, f.workflow, f.tenant, f.timeoutSeconds));
    const own = found.find((f) => f.workflow.id === input.workflowId);
    if (!own) throw error;
    if (launched.get(own.run.id) === 'held_back') return { kind: 'not_found' };
    return { kind: 'started', run: own.run, paused: own.workflow.paused, toldInThread: own.toldInThread };
  }
  if (decided.kind !== 'started') return decided;
  // Disabled (or its tenant) between the commit and the launch: held back, its row skipped saying so, answered as a click a moment later is.
  if ((await launchRun(deps, decided.run, decided.workflow, decided.tenant, decided.timeoutSeconds)) === 'held_back') return { kind: 'not_found' };
  return { kind: 'started', run: decided.run, paused: decided.workflow.paused, toldInThread: decided.toldInThread };
}

type Started = { kind: 'started'; run: Run; workflow: Workflow; tenant: Tenant; timeoutSeconds: number; toldInThread: boolean };
type Decided = Exclude<RunNowResult, { kind: 'started' }> | Started;

/** This process's manual runs whose commit went unanswered (src/engine/unconfirmed-launches.ts). */
const unconfirmed = new UnconfirmedLaunches<Started>();

/** The one transaction: the workflow locked, the `running` row inserted, the open alert's thread told; `keep` hears the run before COMMIT. */
async function decideRunNow(deps: Deps, input: { workflowId: number; actor: Actor; scope: Scope }, keep: (started: Started[]) => void): Promise<Decided> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<Decided> => {
    const workflow = await trx.selectFrom('workflows').selectAll().where('id', '=', input.workflowId).forUpdate().executeTakeFirst();
    if (!workflow || (input.scope.tenantId !== undefined && workflow.tenantId !== input.scope.tenantId)) return { kind: 'not_found' as const };
    // Shared lock: a removal of the tenant committing now (deleteTenant locks its row) is waited for and read, not the row before it.
    const tenant = await trx.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).forShare().executeTakeFirstOrThrow();
    if (!mayStartRuns(workflow, tenant)) return { kind: 'not_found' as const };
    if (!deps.launchers(workflow)) return { kind: 'no_launcher' as const, workflow };
    const running = await trx
      .selectFrom('runs')
      .selectAll()
      .where('workflowId', '=', workflow.id)
      .where('status', '=', 'running')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (running) return { kind: 'already_running' as const, run: running };
    const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
    const run = await insertRunningRun(
      trx,
      { workflow, tick: null, trigger: 'manual', requestedBy: input.actor.user, timeoutSeconds: profile.timeoutSeconds, leaseOwner: deps.replicaId },
      now,
    );
    if (!run) throw new Error(`run now for workflow ${workflow.id}: the manual run row was not inserted`);
    const alert = await trx.selectFrom('alerts').selectAll().where('workflowId', '=', workflow.id).where('status', '=', 'open').forUpdate().executeTakeFirst();
    if (alert) {
      await recordAlertEvent(trx, { alert, tenant, kind: 'run_requested', actor: input.actor.user, data: { runId: run.id, by: input.actor.user, ...(workflow.paused ? { paused: true } : {}) }, now, config: deps.config });
    }
    const started = { kind: 'started' as const, run, workflow, tenant, timeoutSeconds: profile.timeoutSeconds, toldInThread: !!alert };
    keep([started]);
    return started;
  });
}
