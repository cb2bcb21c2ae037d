import type { ColumnType, Generated } from 'kysely';
import type { Defaulted, DefaultedJson, DefaultedTimestamp, Json, Timestamp } from './columns.js';
import type { CompleteBy } from '../../domain/run-duration.js';
import type { OverlapPolicy } from '../../domain/overlap.js';
import type { Severity } from './alerts.js';
import type { RecurringMaintenance } from './tenants.js';

/** Workflows, their policy versions and maintenance windows. */

export type WorkflowMode = 'managed' | 'observed';

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
  /** Unanswered reminders after which an ownership lapses (0: never; default 3, src/domain/escalation.ts). */
  ownershipLapsesAfterReminders?: number;
  /** A success faster than this counts as a failure, "too fast" (issue 16). */
  minDurationSeconds?: number;
  /** A fixed "running long" threshold instead of the learned one (issue 16). */
  runningLongAfterSeconds?: number;
  /** The tick's run must have succeeded by this local time (issue 16; seed 004's freshness deadline). */
  completeBy?: CompleteBy;
  /** A managed tick falling due while a run still runs: `allow` (fire beside it) or `skip` (src/domain/overlap.ts). */
  overlap?: OverlapPolicy;
  /** How late a managed tick may still start; older ones are recorded missed (src/domain/catch-up.ts). */
  catchUpSeconds?: number;
}

export type LauncherConfig =
  | { kind: 'command'; command: string; cwd?: string; env?: Record<string, string>; operatorSet?: boolean }
  | { kind: 'http'; url: string; mode: 'sync' | 'callback'; headers?: Record<string, string>; secret?: string; operatorSet?: boolean };
// `operatorSet`: written by the file sync or the admin token, never accepted from input. An http
// launcher without it is a tenant's and may reach only the hosts the operator allows (docs/security.md).

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
  /**
   * When it was removed: gone from the workflows file, or DELETE over the API (migration 0031); null while
   * declared, `enabled: false` included. Retention deletes a removed one once nothing kept points at it.
   */
  removedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
  /** The newest row of policy_versions for this workflow; null until its policy was first recorded (migration 0010). */
  policyVersion: Defaulted<number | null>;
  shadow: Defaulted<boolean>;
  /** The newest tick whose completion deadline was judged (migration 0014). */
  completionCheckedTick: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface PolicyVersionsTable {
  workflowId: number;
  version: number;
  /** The effective policy: cadence-derived defaults with the workflow's overrides applied. */
  policy: Json<Record<string, unknown>>;
  changedBy: string;
  changedAt: Timestamp;
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

/** A workflows file content synced (migration 0029): see src/domain/file-sync-order.ts. */
export interface WorkflowsFileSyncsTable {
  contentHash: string;
  replicaId: string;
  filePath: string;
  fileModifiedAt: Timestamp | null;
  syncedAt: Timestamp;
  /** Set when the replica's stop completed: no longer running, whatever its heartbeat's last minute says. */
  replicaStoppedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
