import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Columns with a database default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** Timestamps come back as Date and may be written as Date or ISO text. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string | T, string | T>;
type DefaultedJson<T> = ColumnType<T, string | T | undefined, string | T>;

export type RunTrigger = 'schedule' | 'manual' | 'retry' | 'external';
export type RunStatus = 'running' | 'pending_retry' | 'succeeded' | 'failed' | 'missed' | 'skipped';
export type AttemptStatus = 'succeeded' | 'failed' | 'missed';
export type WorkflowMode = 'managed' | 'observed';
export type AlertStatus = 'open' | 'resolved';
export type Severity = 'warning' | 'critical';
export type OwnerTeam = 'engineering' | 'customer';
export type NotificationStatus = 'pending' | 'held' | 'sending' | 'sent' | 'dead' | 'skipped';

/** Per-workflow overrides of the cadence profile; every field optional. */
export interface PolicyOverrides {
  retries?: number;
  alertAfter?: number;
  firstSeverity?: Severity;
  escalationMultiplier?: number;
  recoverAfter?: number;
  graceSeconds?: number;
  timeoutSeconds?: number;
  minRows?: number;
  /** Reminder period for an owned, still failing alert (migration 0005); default from the cadence. */
  remindAfterSeconds?: number;
}

export type LauncherConfig =
  | { kind: 'command'; command: string; cwd?: string; env?: Record<string, string>; operatorSet?: boolean }
  | { kind: 'http'; url: string; mode: 'sync' | 'callback'; headers?: Record<string, string>; secret?: string; operatorSet?: boolean };
// `operatorSet`: written by the file sync or the admin token, never accepted from input. An http
// launcher without it is a tenant's and may reach only the hosts the operator allows (docs/security.md).

export type DestinationConfig = Record<string, unknown> & { kind: string };

export interface TenantsTable {
  id: string;
  name: string;
  channel: string | null;
  apiTokenHash: string | null;
  destinations: DefaultedJson<DestinationConfig[]>;
  /** The only prefix a tenant's launcher `secretEnv` may name; null: none (from the workflows file). */
  secretEnvPrefix: Defaulted<string | null>;
  /** Hosts this tenant's http launchers may target, besides HTTP_LAUNCHER_ALLOWED_HOSTS. */
  launcherHosts: DefaultedJson<string[]>;
  source: Defaulted<'file' | 'api'>;
  enabled: Defaulted<boolean>;
  /** Recurring maintenance windows from the workflows file (migration 0006). */
  maintenance: DefaultedJson<RecurringMaintenance[]>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
  /** Evaluated and recorded as usual, told only to the audit destination (migration 0010). */
  shadow: Defaulted<boolean>;
  /** Who may act on the tenant's alerts in Slack (migration 0005; src/domain/rights.ts). */
  rights: DefaultedJson<TenantRightsConfig>;
  /** Who an unowned escalation pages (migration 0005). */
  oncall: DefaultedJson<OnCallConfig>;
  /** An ownership older than this lapses back to unowned; null: never (migration 0005). */
  ownershipExpiresAfterSeconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the tenant's digest is posted; null: only on demand (migration 0011). */
  digest: ColumnType<DigestSchedule | null, string | null | undefined, string | null>;
}

/** The tenant's digest schedule: node-cron syntax in an IANA zone. */
export interface DigestSchedule {
  cron: string;
  timezone: string;
}

/** A recurring maintenance window as stored: the file's `durationMinutes` / `duration` resolved to milliseconds. */
export interface RecurringMaintenance {
  cron: string;
  timezone: string;
  durationMs: number;
  reason?: string;
}

/** Slack user ids (U…/W…) and user-group ids (S…). */
export interface TenantRightsConfig {
  responders?: string[];
  admins?: string[];
}

export interface OnCallConfig {
  group?: string;
  users?: string[];
}

export interface WorkflowsTable {
  id: Generated<number>;
  tenantId: string;
  name: string;
  cron: string;
  timezone: Defaulted<string>;
  enabled: Defaulted<boolean>;
  monitoring: Defaulted<boolean>;
  paused: Defaulted<boolean>;
  /** A pause set by hand (Slack, API), migration 0006; null when the pause (if any) is the file's. */
  pausedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  pausedBy: ColumnType<string | null, string | null | undefined, string | null>;
  pauseReason: ColumnType<string | null, string | null | undefined, string | null>;
  maintenance: DefaultedJson<RecurringMaintenance[]>;
  mode: WorkflowMode;
  launcher: Json<LauncherConfig | null> | null;
  policy: DefaultedJson<PolicyOverrides>;
  pingKey: string;
  nextTickAt: Timestamp | null;
  source: Defaulted<'file' | 'api'>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
  /** The newest row of policy_versions for this workflow; null until its policy was first recorded (migration 0010). */
  policyVersion: Defaulted<number | null>;
  shadow: Defaulted<boolean>;
}

export interface RunsTable {
  id: Generated<number>;
  workflowId: number;
  tick: Timestamp | null;
  trigger: RunTrigger;
  attempt: Defaulted<number>;
  originalRunId: number | null;
  status: RunStatus;
  attemptStatus: AttemptStatus | null;
  attemptError: string | null;
  startedAt: Timestamp | null;
  finishedAt: Timestamp | null;
  deadlineAt: Timestamp | null;
  error: string | null;
  errorGroup: string | null;
  stage: string | null;
  rows: number | null;
  exitCode: number | null;
  logExcerpt: string | null;
  logUrl: string | null;
  outcomeNote: string | null;
  requestedBy: string | null;
  externalId: string | null;
  processedAt: Timestamp | null;
  leaseOwner: string | null;
  leaseExpiresAt: Timestamp | null;
  /** The tick fell inside a maintenance window: recorded, not held against the workflow (migration 0006). */
  inMaintenance: Defaulted<boolean>;
  createdAt: DefaultedTimestamp;
}

export interface AlertsTable {
  id: Generated<number>;
  workflowId: number;
  generation: number;
  status: AlertStatus;
  severity: Severity;
  openedAt: Timestamp;
  escalatedAt: Timestamp | null;
  escalateAt: Timestamp | null;
  resolvedAt: Timestamp | null;
  cadenceSeconds: number;
  policy: Json<Record<string, unknown>>;
  consecutiveFailures: number;
  lastError: string | null;
  errorGroup: string | null;
  errorGroupFirstAt: Timestamp | null;
  errorGroupLastAt: Timestamp | null;
  errorGroupCount: Defaulted<number>;
  stage: string | null;
  firstRunId: number | null;
  lastRunId: number | null;
  ownerTeam: Defaulted<OwnerTeam>;
  ownerUser: string | null;
  ownerNote: string | null;
  acknowledgedBy: string | null;
  acknowledgedAt: Timestamp | null;
  silencedUntil: Timestamp | null;
  silencedBy: string | null;
  silenceReason: string | null;
  healthyStreak: Defaulted<number>;
  resolvedByRunId: number | null;
  updatedAt: Timestamp;
  /** First seen flapping while open (migration 0003); the `flapping` note is posted once. */
  flappingSince: Timestamp | null;
  /** The workflow's policy version the alert runs under (opened under, or told of since; migration 0010). */
  policyVersion: Defaulted<number | null>;
  /** When the last reminder was told (migration 0005); the claim of the next one. */
  remindedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The upstream incident this alert is linked to (migration 0012): it outlived it, or was open when it broke. */
  upstreamAlertId: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface AlertEventsTable {
  id: Generated<number>;
  alertId: number;
  at: Timestamp;
  kind: string;
  actor: string | null;
  data: DefaultedJson<Record<string, unknown>>;
  /** The policy version the event was decided under (migration 0010). */
  policyVersion: Defaulted<number | null>;
}

export interface NotificationsTable {
  id: Generated<number>;
  alertId: number;
  eventId: number;
  destination: string;
  idempotencyKey: string;
  status: Defaulted<NotificationStatus>;
  attempts: Defaulted<number>;
  nextAttemptAt: Timestamp;
  leaseOwner: string | null;
  leaseExpiresAt: Timestamp | null;
  result: Json<Record<string, unknown>> | null;
  lastError: string | null;
  createdAt: Timestamp;
  sentAt: Timestamp | null;
}

export interface AlertThreadsTable {
  alertId: number;
  destination: string;
  channel: string;
  rootTs: string;
  renderedEventId: number | null;
  createdAt: DefaultedTimestamp;
}

export interface MonitorUptimeTable {
  id: Generated<number>;
  replicaId: string;
  startedAt: Timestamp;
  lastSeenAt: Timestamp;
}

export interface SlackHomeViewsTable {
  userId: string;
  openedAt: Timestamp;
}

/** When the next delivery under a pacing key may start, shared by every replica. */
export interface PaceSlotsTable {
  key: string;
  nextAt: Timestamp;
  updatedAt: Timestamp;
}

/** A one-off maintenance window, or one occurrence of a recurring one (migration 0006). */
export interface MaintenanceWindowsTable {
  id: Generated<number>;
  tenantId: string;
  /** null: the whole tenant. */
  workflowId: number | null;
  startsAt: Timestamp;
  endsAt: Timestamp;
  reason: string | null;
  createdBy: string | null;
  /** Which recurring rule this occurrence belongs to; null for a one-off window. */
  recurrence: string | null;
  /** When its `maintenance_ended` note was claimed; null until then. */
  toldAt: Timestamp | null;
  /** A tenant-wide window that ended with no open alert: the summary for the tenant channel (a `maintenance_ended` event's data). */
  channelNote: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  channelNotedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  createdAt: Timestamp;
}

export interface PolicyVersionsTable {
  workflowId: number;
  version: number;
  /** The effective policy: cadence-derived defaults with the workflow's overrides applied. */
  policy: Json<Record<string, unknown>>;
  changedBy: string;
  changedAt: Timestamp;
}

export interface DestinationOutagesTable {
  destination: string;
  failingSince: Timestamp;
  failures: number;
  heldUntil: Timestamp;
  lastError: string;
  noticedAt: Timestamp | null;
}

export interface HousekeepingFiringsTable {
  job: string;
  fireAt: Timestamp;
  replica: string;
  startedAt: Timestamp;
  finishedAt: Timestamp | null;
  result: Json<Record<string, unknown>> | null;
  error: string | null;
}

/** A workflow's `dependsOn`, resolved (migration 0012). */
export interface WorkflowDependenciesTable {
  workflowId: number;
  upstreamId: number;
}

/** A downstream workflow's failures recorded against an open upstream alert (migration 0012). */
export interface UpstreamBlocksTable {
  upstreamAlertId: number;
  workflowId: number;
  since: Timestamp;
  lastAt: Timestamp;
  failures: Defaulted<number>;
  missed: Defaulted<number>;
  lastRunId: number | null;
}

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
  paceSlots: PaceSlotsTable;
  maintenanceWindows: MaintenanceWindowsTable;
  destinationOutages: DestinationOutagesTable;
  housekeepingFirings: HousekeepingFiringsTable;
  workflowDependencies: WorkflowDependenciesTable;
  upstreamBlocks: UpstreamBlocksTable;
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
