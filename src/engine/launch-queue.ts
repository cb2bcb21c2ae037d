import type { Run } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { launchRun } from '../ledger/launch-run.js';
import type { Fire } from './tick-plan.js';

/** A committed run and the fire it belongs to, ready to launch. */
export interface Launch {
  run: Run;
  fire: Fire;
}

/**
 * Launches committed runs at most `limit` at a time, started as soon as they
 * are added, so the next batch's claim does not wait for them. drain() waits
 * for all and hands back the first failure for the tick to throw, so the
 * runner logs it with the loop's context (launchRun already fails a run whose
 * launcher refuses; what reaches here is the database failing under it, and
 * the run's lease then runs out and the freshness detector fails it).
 */
export class LaunchQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly settled: Promise<void>[] = [];
  private active = 0;
  private firstFailure: { error: unknown } | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly limit: number,
  ) {}

  add(run: Run, fire: Fire): void {
    const { tenantName, ...workflow } = fire.workflow;
    const tenant = { id: workflow.tenantId, name: tenantName };
    const workflowNow = { ...workflow, nextTickAt: fire.nextTickAt };
    let done!: () => void;
    this.settled.push(new Promise<void>((resolve) => (done = resolve)));
    this.waiting.push(async () => {
      try {
        await launchRun(this.deps, run, workflowNow, tenant, fire.timeoutSeconds);
      } catch (error) {
        this.deps.logger.error({ err: error, runId: run.id, workflowId: workflow.id }, 'scheduled launch failed');
        this.firstFailure ??= { error };
      } finally {
        done();
      }
    });
    this.pump();
  }

  /** Waits for every launch; the first failure, if any, for the caller to throw. */
  async drain(): Promise<{ error: unknown } | undefined> {
    await Promise.all(this.settled);
    return this.firstFailure;
  }

  private pump(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      this.active++;
      void next().finally(() => {
        this.active--;
        this.pump();
      });
    }
  }
}
