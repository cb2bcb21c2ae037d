import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_slack_pace.js';
import * as m0003 from './0003_alert_flapping.js';
import * as m0004 from './0004_tenant_trust.js';
import * as m0005 from './0005_human_loop.js';
import * as m0006 from './0006_maintenance.js';
import * as m0007 from './0007_destination_outages.js';
import * as m0008 from './0008_retention_indexes.js';
import * as m0010 from './0010_policy_versions_shadow.js';
import * as m0011 from './0011_tenant_digest.js';
import * as m0012 from './0012_dependencies.js';
import * as m0013 from './0013_storms.js';
import * as m0014 from './0014_run_duration.js';
import * as m0015 from './0015_ledger_indexes.js';
import * as m0016 from './0016_runs_history_unique.js';
import * as m0017 from './0017_foreign_key_indexes.js';
import * as m0018 from './0018_thread_root_key.js';
import * as m0019 from './0019_webhook_destination_ids.js';
import * as m0020 from './0020_escalation_due_index.js';
import * as m0021 from './0021_notifications_by_destination.js';
import * as m0022 from './0022_alert_known_failure.js';
import * as m0023 from './0023_canonical_time_zones.js';
import * as m0024 from './0024_running_runs_by_workflow.js';
import * as m0025 from './0025_alerts_by_workflow.js';
import * as m0026 from './0026_credential_outages.js';
import * as m0027 from './0027_slack_request_replays.js';
import * as m0028 from './0028_destination_refusals.js';
import * as m0029 from './0029_workflows_file_syncs.js';
import * as m0030 from './0030_alert_pagers_at_opening.js';
import * as m0031 from './0031_workflow_purge.js';
import * as m0032 from './0032_held_back_notes.js';

/** Forward-only, applied in name order. Add new files here. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_slack_pace': m0002,
  '0003_alert_flapping': m0003,
  '0004_tenant_trust': m0004,
  '0005_human_loop': m0005,
  '0006_maintenance': m0006,
  '0007_destination_outages': m0007,
  '0008_retention_indexes': m0008,
  '0010_policy_versions_shadow': m0010,
  '0011_tenant_digest': m0011,
  '0012_dependencies': m0012,
  '0013_storms': m0013,
  '0014_run_duration': m0014,
  '0015_ledger_indexes': m0015,
  '0016_runs_history_unique': m0016,
  '0017_foreign_key_indexes': m0017,
  '0018_thread_root_key': m0018,
  '0019_webhook_destination_ids': m0019,
  '0020_escalation_due_index': m0020,
  '0021_notifications_by_destination': m0021,
  '0022_alert_known_failure': m0022,
  '0023_canonical_time_zones': m0023,
  '0024_running_runs_by_workflow': m0024,
  '0025_alerts_by_workflow': m0025,
  '0026_credential_outages': m0026,
  '0027_slack_request_replays': m0027,
  '0028_destination_refusals': m0028,
  '0029_workflows_file_syncs': m0029,
  '0030_alert_pagers_at_opening': m0030,
  '0031_workflow_purge': m0031,
  '0032_held_back_notes': m0032,
};
