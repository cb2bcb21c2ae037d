import type { Deps } from '../deps.js';
import { reportRetryDelay } from '../domain/report-retry.js';
import { finishRun, RUN_LEASE_MS, type FinishResult, type RunOutcome } from '../ledger/runs.js';

type ReportDeps = Pick<Deps, 'db' | 'clock' | 'logger'>;

/**
 * A launcher's only way to report an end. The process it supervised is gone
 * by now, so the outcome exists nowhere else: while the database does not
 * answer it is retried with back-off for the run's lease period
 * (src/domain/report-retry.ts), on the injected clock. The caller holds the
 * run meanwhile (HeldRuns: its lease is renewed whenever the database takes
 * a renewal), so no replica fails it as "worker lost" while its real outcome
 * waits to be written. `stop` (the replica shutting down, past its grace)
 * ends the waiting: one last try, then the run's lease or deadline fails it.
 */
export async function reportOutcome(deps: ReportDeps, runId: number, outcome: RunOutcome, stop?: AbortSignal): Promise<FinishResult | undefined> {
  let firstFailure: number | undefined;
  for (let failures = 1; ; failures++) {
    try {
      const result = await finishRun(deps, runId, outcome);
      if (failures > 1) deps.logger.info({ runId, status: outcome.status, tries: failures }, 'recorded the end of a run after the database came back');
      return result;
    } catch (error) {
      const now = deps.clock.now().getTime();
      firstFailure ??= now;
      const delay = stop?.aborted ? undefined : reportRetryDelay(failures, now - firstFailure, RUN_LEASE_MS);
      if (delay === undefined) {
        deps.logger.error({ err: error, runId, status: outcome.status, tries: failures }, 'could not record the end of a run; its deadline or lease will fail it');
        return undefined;
      }
      if (failures === 1) deps.logger.warn({ err: error, runId, status: outcome.status }, 'could not record the end of a run yet; retrying for the lease period');
      // Woken early by `stop`: the loop then makes its last try.
      await deps.clock.sleep(delay, stop);
    }
  }
}
