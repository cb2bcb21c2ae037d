import type { Deps } from '../../src/deps.js';
import type { Workflow } from '../../src/db/schema.js';
import type { LaunchContext, LaunchOutcome, Launcher, LauncherResolver } from '../../src/launcher.js';
import { finishRun, RUN_LEASE_MS, type RunOutcome } from '../../src/ledger/runs.js';

/**
 * A launcher whose outcomes the test scripts, per workflow, in order. Each
 * outcome ends the run through finishRun (the ledger, as a real launcher
 * would), either at once or after `afterMs` of the test clock
 * (then `finishDue()` ends it). 'hold' leaves the run running; 'refuse'
 * refuses the launch. Workflows without a `launcher` config get none.
 */
export type ScriptedOutcome = (RunOutcome & { afterMs?: number }) | 'hold' | 'refuse';

export class ScriptedLauncher implements Launcher {
  readonly kind = 'scripted';
  readonly launched: LaunchContext[] = [];
  private queues = new Map<number, ScriptedOutcome[]>();
  private pending: { runId: number; dueAt: number; outcome: RunOutcome }[] = [];

  constructor(
    private readonly deps: Pick<Deps, 'db' | 'clock'>,
    private fallback: ScriptedOutcome = { status: 'succeeded' },
  ) {}

  /** What a launch with nothing scripted does. */
  otherwise(outcome: ScriptedOutcome): void {
    this.fallback = outcome;
  }

  readonly resolver: LauncherResolver = (workflow: Workflow) => (workflow.launcher ? this : undefined);

  script(workflowId: number, ...outcomes: ScriptedOutcome[]): void {
    this.queues.set(workflowId, [...(this.queues.get(workflowId) ?? []), ...outcomes]);
  }

  async launch(ctx: LaunchContext): Promise<LaunchOutcome> {
    this.launched.push(ctx);
    const next = this.queues.get(ctx.workflow.id)?.shift() ?? this.fallback;
    if (next === 'refuse') return { started: false, error: 'scripted refusal' };
    if (next === 'hold') return { started: true };
    const { afterMs, ...outcome } = next;
    if (afterMs) {
      this.pending.push({ runId: ctx.runId, dueAt: this.deps.clock.now().getTime() + afterMs, outcome });
      return { started: true };
    }
    await finishRun(this.deps, ctx.runId, outcome);
    return { started: true };
  }

  /** What a supervising launcher does while its runs go on: keep their leases fresh. */
  async renewLeases(): Promise<void> {
    if (this.pending.length === 0) return;
    const until = new Date(this.deps.clock.now().getTime() + RUN_LEASE_MS);
    await this.deps.db
      .updateTable('runs')
      .set({ leaseExpiresAt: until })
      .where(
        'id',
        'in',
        this.pending.map((p) => p.runId),
      )
      .where('status', '=', 'running')
      .execute();
  }

  /** Ends the runs whose scripted duration has passed on the test clock. */
  async finishDue(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    const due = this.pending.filter((p) => p.dueAt <= now);
    this.pending = this.pending.filter((p) => p.dueAt > now);
    for (const p of due) await finishRun(this.deps, p.runId, p.outcome);
    return due.length;
  }
}
