import type { Deps } from '../deps.js';
import { finishRun, type FinishResult, type RunOutcome } from '../ledger/runs.js';

type ReportDeps = Pick<Deps, 'db' | 'clock' | 'logger'>;

const ATTEMPTS = 4;

/**
 * A launcher's only way to report an end. The process it supervised is gone
 * by now, so the outcome exists nowhere else: a database blip is retried a
 * few times (real-time back-off; this is infrastructure, not business time)
 * before giving up, after which the run's lease or deadline fails it.
 */
export async function reportOutcome(deps: ReportDeps, runId: number, outcome: RunOutcome): Promise<FinishResult | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await finishRun(deps, runId, outcome);
    } catch (error) {
      if (attempt >= ATTEMPTS) {
        deps.logger.error({ err: error, runId, status: outcome.status }, 'could not record the end of a run; its deadline or lease will fail it');
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
    }
  }
}
