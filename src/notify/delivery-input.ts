import type { Db } from '../db/connect.js';
import { parseDestination } from '../domain/events.js';
import type { ClaimedNotification } from './claim-notifications.js';
import type { DeliveryInput } from './transport.js';

/**
 * What a transport needs besides the claimed row: its event, and the alert,
 * workflow and tenant as they are now. Three statements: this runs once per message, 50 a
 * second in an alert storm.
 */
export async function loadDeliveryInput(db: Db, claimed: Pick<ClaimedNotification, 'row' | 'queuedBehind'>, now: Date): Promise<DeliveryInput> {
  const notification = claimed.row;
  const found = await db
    .selectFrom('alerts')
    .innerJoin('alertEvents as e', 'e.alertId', 'alerts.id')
    .selectAll('alerts')
    .select(['e.id as eventId', 'e.at as eventAt', 'e.kind as eventKind', 'e.actor as eventActor', 'e.data as eventData', 'e.policyVersion as eventPolicyVersion'])
    .where('alerts.id', '=', notification.alertId)
    .where('e.id', '=', notification.eventId)
    .executeTakeFirstOrThrow();
  const { eventId, eventAt, eventKind, eventActor, eventData, eventPolicyVersion, ...alert } = found;
  const event = { id: eventId, alertId: alert.id, at: eventAt, kind: eventKind, actor: eventActor, data: eventData, policyVersion: eventPolicyVersion };
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { notification, target: parseDestination(notification.destination).target, event, alert, workflow, tenant, queuedBehind: claimed.queuedBehind, now };
}
