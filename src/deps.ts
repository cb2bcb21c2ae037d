import type { Clock } from './clock.js';
import type { Config } from './config/env.js';
import type { Db } from './db/connect.js';
import type { Logger } from './log.js';
import type { LauncherResolver } from './launcher.js';

/** What every service and loop is handed. Nothing else is global. */
export interface Deps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** This process's identity in leases and uptime rows. */
  replicaId: string;
  /** Which launcher starts a workflow's runs (scheduled, retry, run now). */
  launchers: LauncherResolver;
  /**
   * Wakes this process's loops that listen on a NOTIFY channel, at once: for
   * a commit this process just made (the NOTIFY it sent still wakes the other
   * replicas; this saves the hop through the LISTEN connection). Absent where
   * no loops run.
   */
  wake?: (channel: string) => void;
  /** The run poller's own pool (see open-database.ts); the poller uses `db` when absent. */
  pollerDb?: Db;
}
