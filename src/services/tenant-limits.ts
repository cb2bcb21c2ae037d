import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { workflowLimitRefusal, type WorkflowLimitRefusal } from '../domain/tenant-limits.js';

/**
 * A tenant token's new workflow past MAX_WORKFLOWS_PER_TENANT. The caller
 * holds the tenant's row (`for no key update`, taken before any workflow
 * row), so two creations at once take turns at the count.
 */
export async function workflowLimitOf(trx: Transaction<Database>, tenant: string, limit: number): Promise<WorkflowLimitRefusal | undefined> {
  const { n } = await trx
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenantId', '=', tenant)
    .where('enabled', '=', true)
    .executeTakeFirstOrThrow();
  return workflowLimitRefusal(tenant, Number(n), limit);
}
