import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AlertEventsTable, AlertsTable, AlertThreadsTable, DestinationOutagesTable, DestinationRefusalsTable, InstanceKeysTable, NotificationsTable, PaceSlotsTable, SlackHomeViewsTable, SlackRequestsSeenTable } from './schema/alerts.js';
import type { UpstreamBlocksTable, WorkflowDependenciesTable } from './schema/dependencies.js';
import type { HousekeepingFiringsTable, MonitorUptimeTable, RunsTable } from './schema/runs.js';
import type { SharedCausesTable, StormAlertsTable, StormsTable } from './schema/storms.js';
import type { TenantsTable } from './schema/tenants.js';
import type { MaintenanceWindowsTable, PolicyVersionsTable, WorkflowsFileSyncsTable, WorkflowsTable } from './schema/workflows.js';

/** The kysely `Database`: one table type per table, kept by area in src/db/schema/. */
export type * from './schema/alerts.js';
export type * from './schema/dependencies.js';
export type * from './schema/runs.js';
export type * from './schema/storms.js';
export type * from './schema/tenants.js';
export type * from './schema/workflows.js';

export interface Database {
  policyVersions: PolicyVersionsTable;
  tenants: TenantsTable;
  workflows: WorkflowsTable;
  runs: RunsTable;
  alerts: AlertsTable;
  alertEvents: AlertEventsTable;
  notifications: NotificationsTable;
  alertThreads: AlertThreadsTable;
  monitorUptime: MonitorUptimeTable;
  slackHomeViews: SlackHomeViewsTable;
  slackRequestsSeen: SlackRequestsSeenTable;
  paceSlots: PaceSlotsTable;
  maintenanceWindows: MaintenanceWindowsTable;
  destinationOutages: DestinationOutagesTable;
  destinationRefusals: DestinationRefusalsTable;
  instanceKeys: InstanceKeysTable;
  housekeepingFirings: HousekeepingFiringsTable;
  workflowDependencies: WorkflowDependenciesTable;
  upstreamBlocks: UpstreamBlocksTable;
  storms: StormsTable;
  stormAlerts: StormAlertsTable;
  sharedCauses: SharedCausesTable;
  workflowsFileSyncs: WorkflowsFileSyncsTable;
}

export type Tenant = Selectable<TenantsTable>;
export type Workflow = Selectable<WorkflowsTable>;
export type NewWorkflow = Insertable<WorkflowsTable>;
export type WorkflowUpdate = Updateable<WorkflowsTable>;
export type Run = Selectable<RunsTable>;
export type NewRun = Insertable<RunsTable>;
export type RunUpdate = Updateable<RunsTable>;
export type Alert = Selectable<AlertsTable>;
export type AlertEvent = Selectable<AlertEventsTable>;
export type Notification = Selectable<NotificationsTable>;
export type AlertThread = Selectable<AlertThreadsTable>;
