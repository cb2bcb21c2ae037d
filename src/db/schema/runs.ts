import type { ColumnType, Generated } from 'kysely';
import type { Defaulted, DefaultedTimestamp, Json, Timestamp } from './columns.js';

/** The ledger of runs, and what the loops record about themselves. */

export type RunTrigger = 'schedule' | 'manual' | 'retry' | 'external';
export type RunStatus = 'running' | 'pending_retry' | 'succeeded' | 'failed' | 'missed' | 'skipped';
export type AttemptStatus = 'succeeded' | 'failed' | 'missed';

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
  /** How long the attempt ran, set when it ends; null when unknown (migration 0014). */
  durationSeconds: Defaulted<number | null>;
  /** When "running long" was told for this run; setting it is the claim (migration 0014). */
  longNoticedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface MonitorUptimeTable {
  id: Generated<number>;
  replicaId: string;
  startedAt: Timestamp;
  lastSeenAt: Timestamp;
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
