import type { Db } from '../db/connect.js';

/**
 * A storm's members, each with its alert (`a`), workflow (`w`) and tenant
 * (`t`), and its own thread in the storm's channel if it has one (`th`; the
 * thread of that destination only, not another channel's). Callers pick the
 * columns and any further filter; a transaction is a `Db` too.
 */
export function stormMembers(db: Db, stormId: number) {
  return db
    .selectFrom('stormAlerts as m')
    .innerJoin('alerts as a', 'a.id', 'm.alertId')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .leftJoin('alertThreads as th', (j) => j.onRef('th.alertId', '=', 'm.alertId').onRef('th.destination', '=', 'm.destination'))
    .where('m.stormId', '=', stormId);
}
