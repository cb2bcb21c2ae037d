import type { Deps } from '../deps.js';
import { nextFireAfter } from '../domain/schedule.js';
import { reportRun } from '../services/ingest.js';
import { scriptedAttempt } from './outcomes.js';
import { runOutcome, type ScenarioLauncher } from './scenario-launcher.js';
import type { OutcomeRule, ScenarioWorkflow } from './scenario.js';

/**
 * Plays the scheduler outside the bot that runs observed workflows (a
 * Kubernetes CronJob, plain cron): at each tick it reports the run's start
 * through the ingest service, as the job's own API call would, and its end
 * when the scenario says. A tick whose first attempt is `missing` reports
 * nothing at all; the freshness detector finds the hole.
 */
export class OutsideScheduler {
  private readonly cursors: { workflow: ScenarioWorkflow; next: Date }[];

  constructor(
    private readonly deps: Deps,
    workflows: ScenarioWorkflow[],
    private readonly rules: readonly OutcomeRule[],
    private readonly launcher: ScenarioLauncher,
    start: Date,
    private readonly until: Date,
  ) {
    // The first tick at or after start (nextFireAfter is strictly after).
    this.cursors = workflows
      .filter((w) => w.mode === 'observed')
      .map((workflow) => ({ workflow, next: nextFireAfter(workflow.cron, workflow.timezone, new Date(start.getTime() - 1)) }));
  }

  nextTickAt(): Date | undefined {
    const upcoming = this.cursors.filter((c) => c.next <= this.until).map((c) => c.next.getTime());
    return upcoming.length ? new Date(Math.min(...upcoming)) : undefined;
  }

  /** Reports every tick due at `now`; returns how many runs were started. */
  async reportDue(now: Date): Promise<number> {
    let started = 0;
    for (const cursor of this.cursors) {
      while (cursor.next <= now && cursor.next <= this.until) {
        const tick = cursor.next;
        cursor.next = nextFireAfter(cursor.workflow.cron, cursor.workflow.timezone, tick);
        const { attempt, durationMs } = scriptedAttempt(this.rules, cursor.workflow.key, tick, 1);
        if (attempt.status === 'missing') continue;
        const result = await reportRun(this.deps, { tenant: cursor.workflow.tenant, workflow: cursor.workflow.name, status: 'running', tick }, {});
        if (result.kind !== 'created') throw new Error(`the outside scheduler could not report ${cursor.workflow.key} at ${tick.toISOString()}: ${result.kind}`);
        // A hung job reported its start and is never heard from again: its timeout ends it.
        if (attempt.status !== 'hangs') this.launcher.endLater(result.run.id, now.getTime() + durationMs, runOutcome(attempt));
        started++;
      }
    }
    return started;
  }
}
