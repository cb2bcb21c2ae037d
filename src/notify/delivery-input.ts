import { sql } from 'kysely';
import { rowFromJson } from '../db/json-rows.js';
import type { Alert, AlertEvent, Notification, Tenant, Workflow } from '../db/schema.js';
import { parseDestination } from '../domain/events.js';
import type { DeliveryInput, LastRun } from './transport.js';

/**
 * What a transport needs besides the claimed row: its event, and the alert,
 * workflow, tenant and the alert's last run as they are at the claim. Read by the claim statement
 * itself (`DELIVERY_INPUT_COLUMNS` in its `returning`, as JSON beside the
 * row): this runs once per message, 50 a second in an alert storm, and sits
 * between a failure and its message, so it costs no round trip of its own.
 * A pipeline claims a destination's next row just before waiting for its
 * pacing slot, so what is rendered is at most one pace interval old.
 */
export const DELIVERY_INPUT_COLUMNS = sql`
  (select to_jsonb(e) from alert_events e where e.id = notifications.event_id) as event_row,
  (select to_jsonb(a) from alerts a where a.id = notifications.alert_id) as alert_row,
  (select to_jsonb(w) from alerts a join workflows w on w.id = a.workflow_id where a.id = notifications.alert_id) as workflow_row,
  (select to_jsonb(t) from alerts a join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id where a.id = notifications.alert_id) as tenant_row,
  (select jsonb_build_object('id', r.id, 'log_excerpt', r.log_excerpt, 'log_url', r.log_url, 'stage', r.stage)
    from alerts a join runs r on r.id = a.last_run_id where a.id = notifications.alert_id) as last_run_row`;

export interface DeliveryInputColumns {
  eventRow: Record<string, unknown> | null;
  alertRow: Record<string, unknown> | null;
  workflowRow: Record<string, unknown> | null;
  tenantRow: Record<string, unknown> | null;
  lastRunRow: Record<string, unknown> | null;
}

/** The claimed row and its `DELIVERY_INPUT_COLUMNS`, read as a transport's input (the sender adds its `now`). */
export function deliveryInputOf(notification: Notification, columns: DeliveryInputColumns, queuedBehind: number): Omit<DeliveryInput, 'now' | 'keepLease'> {
  const { eventRow, alertRow, workflowRow, tenantRow, lastRunRow } = columns;
  // Foreign keys make these present; a row without them is a bug to hear about, as it was when they were read on their own.
  if (!eventRow || !alertRow || !workflowRow || !tenantRow) throw new Error(`notification ${notification.id}: its event, alert, workflow or tenant is missing`);
  return {
    notification,
    target: parseDestination(notification.destination).target,
    event: rowFromJson<AlertEvent>(eventRow),
    alert: rowFromJson<Alert>(alertRow),
    workflow: rowFromJson<Workflow>(workflowRow),
    tenant: rowFromJson<Tenant>(tenantRow),
    lastRun: lastRunRow ? rowFromJson<LastRun>(lastRunRow) : null,
    queuedBehind,
  };
}
