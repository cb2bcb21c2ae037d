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
}
