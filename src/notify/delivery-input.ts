import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { rowFromJson } from '../db/json-rows.js';
import type { Tenant, Workflow } from '../db/schema.js';
import { parseDestination } from '../domain/events.js';
import type { ClaimedNotification } from './claim-notifications.js';
import type { DeliveryInput } from './transport.js';

/**
 * What a transport needs besides the claimed row: its event, and the alert,
 * workflow and tenant as they are now. One statement (the workflow and
 * tenant come back as JSON beside the alert): this runs once per message,
 * 50 a second in an alert storm, and sits between a failure and its message.
 */
export async function loadDeliveryInput(db: Db, claimed: Pick<ClaimedNotification, 'row' | 'queuedBehind'>, now: Date): Promise<DeliveryInput> {
  const notification = claimed.row;
  const found = await db
    .selectFrom('alerts')
    .innerJoin('alertEvents as e', 'e.alertId', 'alerts.id')
    .innerJoin('workflows as w', 'w.id', 'alerts.workflowId')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .selectAll('alerts')
    .select(['e.id as eventId', 'e.at as eventAt', 'e.kind as eventKind', 'e.actor as eventActor', 'e.data as eventData', 'e.policyVersion as eventPolicyVersion'])
    .select([sql<Record<string, unknown>>`to_jsonb(w)`.as('workflowRow'), sql<Record<string, unknown>>`to_jsonb(t)`.as('tenantRow')])
    .where('alerts.id', '=', notification.alertId)
    .where('e.id', '=', notification.eventId)
    .executeTakeFirstOrThrow();
  const { eventId, eventAt, eventKind, eventActor, eventData, eventPolicyVersion, workflowRow, tenantRow, ...alert } = found;
  const event = { id: eventId, alertId: alert.id, at: eventAt, kind: eventKind, actor: eventActor, data: eventData, policyVersion: eventPolicyVersion };
  const workflow = rowFromJson<Workflow>(workflowRow);
  const tenant = rowFromJson<Tenant>(tenantRow);
  return { notification, target: parseDestination(notification.destination).target, event, alert, workflow, tenant, queuedBehind: claimed.queuedBehind, now };
}
