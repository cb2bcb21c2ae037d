/**
 * Per-tenant bounds (docs/operations.md, "Many tenants"): every tenant's
 * workflows share one database and one set of loops (ticks, evaluation, the
 * outbox), so a tenant token may not grow its share without end. The
 * operator (the workflows file, the admin token) is not bound: it is trusted
 * with the host.
 */

export interface WorkflowLimitRefusal {
  limit: number;
  message: string;
}

/**
 * Whether a tenant that has `enabled` workflows now (a deleted one keeps its
 * history but not its place) may have one more, under `limit`
 * (`MAX_WORKFLOWS_PER_TENANT`). Undefined when it may.
 */
export function workflowLimitRefusal(tenant: string, enabled: number, limit: number): WorkflowLimitRefusal | undefined {
  if (enabled < limit) return undefined;
  return {
    limit,
    message: `tenant ${tenant} has ${enabled} workflows, the most a tenant token may have (MAX_WORKFLOWS_PER_TENANT=${limit}); delete one or ask the operator`,
  };
}

/** What a tenant's report past `TENANT_REPORTS_PER_MINUTE` is answered (429, with Retry-After). */
export function reportLimitMessage(tenant: string, perMinute: number, retryAfterSeconds: number): string {
  return `tenant ${tenant} reported more runs than it may in a minute (TENANT_REPORTS_PER_MINUTE=${perMinute}); retry after ${retryAfterSeconds} s`;
}

/**
 * Whether a tenant with `upcoming` one-off maintenance windows not yet ended
 * may set one more, under `limit` (`MAX_MAINTENANCE_WINDOWS_PER_TENANT`):
 * every claim of the tenant's finished runs reads them. Undefined when it may.
 */
export function windowLimitRefusal(tenant: string, upcoming: number, limit: number): WorkflowLimitRefusal | undefined {
  if (upcoming < limit) return undefined;
  return {
    limit,
    message: `tenant ${tenant} has ${upcoming} maintenance windows not yet ended, the most it may set (MAX_MAINTENANCE_WINDOWS_PER_TENANT=${limit}); wait for one to end or ask the operator`,
  };
}
