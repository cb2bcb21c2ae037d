import { METADATA_EVENT_TYPE } from '../blocks/ids.js';

export interface AlertMessageMetadata {
  event_type: typeof METADATA_EVENT_TYPE;
  event_payload: { alert_id: number; tenant: string; workflow: string; event: string; severity: string; key: string };
}

/**
 * Carried by every message the bot posts. The key is how an unknown outcome
 * is settled: the sender looks for it in the thread before sending again.
 */
export function alertMetadata(p: { alertId: number; tenant: string; workflow: string; event: string; severity: string; key: string }): AlertMessageMetadata {
  return {
    event_type: METADATA_EVENT_TYPE,
    event_payload: { alert_id: p.alertId, tenant: p.tenant, workflow: p.workflow, event: p.event, severity: p.severity, key: p.key },
  };
}

export function metadataKey(message: { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }): string | undefined {
  const m = message.metadata;
  if (m?.event_type !== METADATA_EVENT_TYPE) return undefined;
  const key = m.event_payload?.key;
  return typeof key === 'string' ? key : undefined;
}

/**
 * A storm message's metadata: its key, and the storm's first alert (the same
 * on the post and every update, so the message always names one alert).
 */
export function stormMetadata(view: { members: { alertId: number; tenant: { id: string }; workflow: string; severity: string }[] }, key: string): AlertMessageMetadata | undefined {
  const first = view.members[0];
  return first ? alertMetadata({ alertId: first.alertId, tenant: first.tenant.id, workflow: first.workflow, event: 'storm', severity: first.severity, key }) : undefined;
}
