import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { RoutingConfig } from '../ledger/destinations.js';
import { recordAlertEvents } from '../ledger/alert-events.js';

/**
 * Shadow mode (issue 17): a tenant or workflow in shadow is evaluated and
 * recorded as usual and told only to the audit destination (routing, in
 * src/ledger/destinations.ts). Going live does not replay history into the
 * tenant's channel: each open alert gets one `went_live` event, so every
 * destination that never heard of it starts its thread from the alert's
 * current state (a root), and the audit thread is told once.
 */

/** Which workflows to look at: one tenant's, one workflow (by tenant and name), or all. */
export type ShadowScope = { tenantId?: string; workflowName?: string };

/** workflow id → whether it is in shadow now (its own flag or its tenant's). */
export async function shadowStates(trx: Transaction<Database>, scope: ShadowScope = {}): Promise<Map<number, boolean>> {
  const rows = await trx
    .selectFrom('workflows as w')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .select(['w.id', 'w.shadow', 't.shadow as tenantShadow'])
    .$if(scope.tenantId !== undefined, (q) => q.where('w.tenantId', '=', scope.tenantId!))
    .$if(scope.workflowName !== undefined, (q) => q.where('w.name', '=', scope.workflowName!))
    .execute();
  return new Map(rows.map((r) => [r.id, r.shadow || r.tenantShadow]));
}

/** Records `went_live` for the open alerts of every workflow that was in shadow before and is not now. */
export async function announceGoingLive(trx: Transaction<Database>, before: Map<number, boolean>, now: Date, config: RoutingConfig, scope: ShadowScope = {}): Promise<number> {
  const after = await shadowStates(trx, scope);
  const live = [...before].filter(([id, wasShadow]) => wasShadow && after.get(id) === false).map(([id]) => id);
  if (live.length === 0) return 0;
  const open = await trx
    .selectFrom('alerts as a')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .selectAll('a')
    .select('t.channel')
    .where('a.status', '=', 'open')
    .where('a.workflowId', 'in', live)
    .execute();
  await recordAlertEvents(
    trx,
    open.map(({ channel, ...alert }) => ({ alert, tenant: { channel }, kind: 'went_live' as const, data: {}, now, config })),
  );
  return open.length;
}
