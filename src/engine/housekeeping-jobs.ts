import type { Deps } from '../deps.js';
import { runRetentionPass } from '../ledger/retention.js';
import type { HousekeepingJob } from './housekeeping.js';

/** The replica's wall-clock jobs, from the configuration. */
export function housekeepingJobs(deps: Pick<Deps, 'db' | 'config'>): HousekeepingJob[] {
  const c = deps.config;
  return [
    {
      name: 'retention',
      cron: c.RETENTION_CRON,
      timezone: 'UTC',
      // A first pass over a large backlog can outlast the cron's period: the next firing skips rather than joins it.
      exclusive: true,
      run: async (now) => ({
        ...(await runRetentionPass(deps.db, now, {
          runDays: c.RUN_RETENTION_DAYS,
          alertDays: c.ALERT_RETENTION_DAYS,
          notificationDays: c.NOTIFICATION_RETENTION_DAYS,
          batch: c.RETENTION_BATCH,
        })),
      }),
    },
  ];
}
