import type { Selectable } from 'kysely';
import type { MaintenanceWindowsTable } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { oneOffWindowProblem } from '../domain/maintenance.js';
import type { Scope } from '../ledger/alert-queries.js';

/** One-off maintenance windows, set from Slack (`/scheduler maintenance`) or the API (`POST /api/v1/maintenance`). */

export type MaintenanceWindow = Selectable<MaintenanceWindowsTable>;

export type StartMaintenanceResult = { kind: 'ok'; window: MaintenanceWindow; workflow: string | null } | { kind: 'not_found' } | { kind: 'bad_start'; problem: string };

export interface StartMaintenanceInput {
  tenantId: string;
  /** A workflow's name in the tenant; absent: the whole tenant. */
  workflow?: string | null;
  durationMs: number;
  /** When it starts; now when absent. */
  startsAt?: Date;
  reason?: string | null;
  actor: string;
  scope: Scope;
}

/**
 * Records a one-off window. The tenant (and workflow) must exist and be in
 * the caller's scope; outside it is not_found, never "exists elsewhere".
 * Nothing else happens now: the poller and the escalation clock read the
 * window when they judge a tick or a warning, and the maintenance clock tells
 * its end.
 */
export async function startMaintenance(deps: Pick<Deps, 'db' | 'clock'>, input: StartMaintenanceInput): Promise<StartMaintenanceResult> {
  if (input.scope.tenantId !== undefined && input.scope.tenantId !== input.tenantId) return { kind: 'not_found' };
  const now = deps.clock.now();
  const tenant = await deps.db.selectFrom('tenants').select('id').where('id', '=', input.tenantId).where('enabled', '=', true).executeTakeFirst();
  if (!tenant) return { kind: 'not_found' };
  let workflowId: number | null = null;
  if (input.workflow) {
    const workflow = await deps.db.selectFrom('workflows').select('id').where('tenantId', '=', input.tenantId).where('name', '=', input.workflow).where('enabled', '=', true).executeTakeFirst();
    if (!workflow) return { kind: 'not_found' };
    workflowId = workflow.id;
  }
  const startsAt = input.startsAt ?? now;
  // After the scope and existence checks: another tenant's name gets the same 404 whatever its start.
  const problem = oneOffWindowProblem(startsAt, input.durationMs, now);
  if (problem) return { kind: 'bad_start', problem };
  const window = await deps.db
    .insertInto('maintenanceWindows')
    .values({
      tenantId: input.tenantId,
      workflowId,
      startsAt,
      endsAt: new Date(startsAt.getTime() + input.durationMs),
      reason: input.reason?.trim() || null,
      createdBy: input.actor,
      recurrence: null,
      toldAt: null,
      createdAt: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { kind: 'ok', window, workflow: input.workflow ?? null };
}
