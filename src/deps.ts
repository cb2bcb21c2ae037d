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
}
