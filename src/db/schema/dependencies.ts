import type { ColumnType } from 'kysely';
import type { Defaulted, Timestamp } from './columns.js';

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
  /** When the downstream tenant's channel was told it is held back by another tenant's workflow (migration 0032); null: not (yet). */
  heldNotedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When it was told the upstream incident ended; null: not (yet). */
  releasedNotedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
