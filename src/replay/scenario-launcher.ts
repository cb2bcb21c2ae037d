import type { Deps } from '../deps.js';
import type { LaunchContext, LaunchOutcome, Launcher, LauncherResolver } from '../launcher.js';
import { releaseRunLease } from '../ledger/run-leases.js';
import { finishRun, type RunOutcome } from '../ledger/runs.js';
import { scriptedAttempt } from './outcomes.js';
import type { Attempt, ManualOutcome, OutcomeRule } from './scenario.js';

const DEFAULT_MANUAL_DURATION_MS = 60_000;

interface PendingEnd {
  runId: number;
  dueAt: number;
  outcome: RunOutcome;
  /** Launched here, so this process supervises it and keeps its lease (an observed tick's run is not ours). */
  held: boolean;
}

/**
 * The one stand-in for the outside world's jobs: a launcher whose attempts
 * end as the scenario says, `durationSeconds` of virtual time after they
 * start, reported through the ledger's finishRun like any launcher. A
 * `missing` or `hangs` attempt is accepted and never heard from again (its
 * lease is handed back, as a callback launch's is), so only its deadline fails it.
 */
export class ScenarioLauncher implements Launcher {
  readonly kind = 'scenario';
  readonly resolver: LauncherResolver = () => this;
  private pending: PendingEnd[] = [];
  private readonly manual = new Map<number, ManualOutcome[]>();

  constructor(
    private readonly deps: Pick<Deps, 'db' | 'clock' | 'replicaId'>,
    private readonly rules: readonly OutcomeRule[],
    private readonly keyOf: (workflowId: number) => string,
  ) {}

  /** The outcome the next manual run of this workflow will have (a run_now action sets it just before asking). */
  expectManualRun(workflowId: number, outcome: ManualOutcome): void {
    this.manual.set(workflowId, [...(this.manual.get(workflowId) ?? []), outcome]);
  }

  forgetManualRun(workflowId: number): void {
    this.manual.get(workflowId)?.pop();
  }

  async launch(ctx: LaunchContext): Promise<LaunchOutcome> {
    const now = this.deps.clock.now().getTime();
    if (ctx.trigger === 'manual' || ctx.tick === null) {
      const outcome = this.manual.get(ctx.workflow.id)?.shift() ?? { status: 'succeeded' as const };
      this.endLater(ctx.runId, now + (outcome.durationSeconds !== undefined ? outcome.durationSeconds * 1000 : DEFAULT_MANUAL_DURATION_MS), runOutcome(outcome), true);
      return { started: true };
    }
    const { attempt, durationMs } = scriptedAttempt(this.rules, this.keyOf(ctx.workflow.id), ctx.tick, ctx.attempt);
    if (attempt.status === 'missing' || attempt.status === 'hangs') {
      await releaseRunLease(this.deps, ctx.runId);
      return { started: true };
    }
    this.endLater(ctx.runId, now + durationMs, runOutcome(attempt), true);
    return { started: true };
  }

  /** Schedules the end of a run started elsewhere (an observed tick the outside scheduler reported). */
  endLater(runId: number, dueAt: number, outcome: RunOutcome, held = false): void {
    this.pending.push({ runId, dueAt, outcome, held });
  }

  nextEndAt(): Date | undefined {
    if (this.pending.length === 0) return undefined;
    return new Date(Math.min(...this.pending.map((p) => p.dueAt)));
  }

  heldRunIds(): number[] {
    return this.pending.filter((p) => p.held).map((p) => p.runId);
  }

  /**
   * Ends every run whose time has come. They run at once: each is its own
   * conditional update on its own row, and their ids (hence the poller's
   * order) were fixed when they started, so the replay stays deterministic.
   */
  async finishDue(now: Date): Promise<number> {
    const due = this.pending.filter((p) => p.dueAt <= now.getTime());
    if (due.length === 0) return 0;
    this.pending = this.pending.filter((p) => p.dueAt > now.getTime());
    await Promise.all(due.map((p) => finishRun(this.deps, p.runId, p.outcome)));
    return due.length;
  }
}

export function runOutcome(attempt: Exclude<Attempt, { status: 'missing' | 'hangs' }> | ManualOutcome): RunOutcome {
  if (attempt.status === 'succeeded') return { status: 'succeeded', rows: attempt.rows ?? null };
  return { status: 'failed', error: attempt.error ?? 'failed', stage: attempt.stage ?? null, rows: attempt.rows ?? null };
}
