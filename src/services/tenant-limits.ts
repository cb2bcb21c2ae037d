import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { workflowLimitRefusal, type WorkflowLimitRefusal } from '../domain/tenant-limits.js';

/** A tenant token's new workflow past MAX_WORKFLOWS_PER_TENANT; the tenant's row locked first, so two creations at once take turns at the count. */
export async function workflowLimitOf(trx: Transaction<Database>, tenant: string, limit: number): Promise<WorkflowLimitRefusal | undefined> {
  await trx.selectFrom('tenants').select('id').where('id', '=', tenant).forNoKeyUpdate().execute();
  const { n } = await trx
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenantId', '=', tenant)
    .where('enabled', '=', true)
    .executeTakeFirstOrThrow();
  return workflowLimitRefusal(tenant, Number(n), limit);
}
