import type { Selectable, Transaction } from 'kysely';
import type { Database, MaintenanceWindowsTable } from '../db/schema.js';
import { windowLimitRefusal, type WorkflowLimitRefusal } from '../domain/tenant-limits.js';
import type { Deps } from '../deps.js';
import { oneOffWindowProblem } from '../domain/maintenance.js';
import type { Scope } from '../ledger/alert-queries.js';

/** One-off maintenance windows, set from Slack (`/scheduler maintenance`) or the API (`POST /api/v1/maintenance`). */

export type MaintenanceWindow = Selectable<MaintenanceWindowsTable>;

export type StartMaintenanceResult =
  | { kind: 'ok'; window: MaintenanceWindow; workflow: string | null }
  | { kind: 'not_found' }
  | { kind: 'bad_start'; problem: string }
  | { kind: 'window_limit'; refusal: WorkflowLimitRefusal };

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
export async function startMaintenance(deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: StartMaintenanceInput): Promise<StartMaintenanceResult> {
  if (input.scope.tenantId !== undefined && input.scope.tenantId !== input.tenantId) return { kind: 'not_found' };
  return deps.db.transaction().execute((trx) => startIn(trx, deps, input));
}

async function startIn(trx: Transaction<Database>, deps: Pick<Deps, 'clock' | 'config'>, input: StartMaintenanceInput): Promise<StartMaintenanceResult> {
  const now = deps.clock.now();
  const scoped = input.scope.tenantId !== undefined;
  // A tenant's own windows take turns on its row, so the count below is exact.
  const tenant = await trx.selectFrom('tenants').select('id').where('id', '=', input.tenantId).where('enabled', '=', true).$if(scoped, (q) => q.forNoKeyUpdate()).executeTakeFirst();
  if (!tenant) return { kind: 'not_found' };
  let workflowId: number | null = null;
  if (input.workflow) {
    const workflow = await trx.selectFrom('workflows').select('id').where('tenantId', '=', input.tenantId).where('name', '=', input.workflow).where('enabled', '=', true).executeTakeFirst();
    if (!workflow) return { kind: 'not_found' };
    workflowId = workflow.id;
  }
  const startsAt = input.startsAt ?? now;
  // After the scope and existence checks: another tenant's name gets the same 404 whatever its start.
  const problem = oneOffWindowProblem(startsAt, input.durationMs, now);
  if (problem) return { kind: 'bad_start', problem };
  if (scoped) {
    const { n } = await trx.selectFrom('maintenanceWindows').select((eb) => eb.fn.countAll<string>().as('n')).where('tenantId', '=', input.tenantId).where('recurrence', 'is', null).where('endsAt', '>', now).executeTakeFirstOrThrow();
    const refusal = windowLimitRefusal(input.tenantId, Number(n), deps.config.MAX_MAINTENANCE_WINDOWS_PER_TENANT);
    if (refusal) return { kind: 'window_limit', refusal };
  }
  const window = await trx
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
