import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_slack_pace.js';
import * as m0003 from './0003_alert_flapping.js';
import * as m0005 from './0005_human_loop.js';

/** Forward-only, applied in name order. Add new files here. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_slack_pace': m0002,
  '0003_alert_flapping': m0003,
  '0005_human_loop': m0005,
};
