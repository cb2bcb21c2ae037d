import type { Config } from '../../config/env.js';
import type { Db } from '../../db/connect.js';
import type { RoutingConfig } from '../../ledger/destinations.js';
import { sql } from 'kysely';
import { incidentDedupKey, installationOf, type IncidentAudience } from '../../domain/pagerduty-incident.js';
import { cutText } from '../../domain/text.js';
import { type DeliveryInput, type DeliveryResult, type LastRun, type Transport, LEASE_LOST } from '../transport.js';
import { ownerChange } from '../event-text.js';
import { alertFacts } from './alert-facts.js';
import { audienceOf, destinationSpecFor, isResult } from './delivery-context.js';
import { postJson } from './post-json.js';

export type PagerDutyAction = 'trigger' | 'acknowledge' | 'resolve';

/**
 * The dedup_key of the alert's incident at this routing key: the one its
 * trigger there was sent with (so an incident triggered before an upgrade, or
 * under another installation tag, still resolves), else a new incident's,
 * namespaced by the installation (src/domain/pagerduty-incident.ts).
 */
export async function alertDedupKey(db: Db, input: Pick<DeliveryInput, 'alert' | 'notification'>, destinationIdKey: string | undefined): Promise<string> {
  const triggered = await db
    .selectFrom('notifications')
    .select(sql<string>`result->>'dedupKey'`.as('dedupKey'))
    .where('alertId', '=', input.alert.id)
    .where('destination', '=', input.notification.destination)
    .where('status', '=', 'sent')
    .where(sql<boolean>`result ? 'dedupKey'`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return incidentDedupKey(input.alert.id, destinationIdKey ? installationOf(destinationIdKey) : undefined, triggered?.dedupKey);
}

/**
 * The Events API v2 action for an alert event, or none: opened, escalated and
 * went_live (a shadow alert's first event here) trigger (a trigger on an open
 * incident updates it), a person taking
 * ownership acknowledges, resolved resolves. A reassign is not an
 * acknowledgement (the new owner has not seen it yet), and other events have
 * no PagerDuty meaning.
 */
export function pagerDutyAction(event: Pick<DeliveryInput['event'], 'kind' | 'actor' | 'data'>): PagerDutyAction | undefined {
  switch (event.kind) {
    case 'opened':
    case 'escalated':
    case 'went_live':
      return 'trigger';
    case 'owner_changed':
      return ownerChange(event) === 'take' ? 'acknowledge' : undefined;
    case 'resolved':
      return 'resolve';
    default:
      return undefined;
  }
}

/**
 * What is sent for an alert event as the alert stands when it is delivered
 * (held rows go out after an outage, a credential hold or a silence): a
 * trigger or an acknowledgement for an alert that has resolved meanwhile is
 * not sent, so nobody is paged for an incident already over (its resolve
 * still goes, in case an earlier trigger did); a shadow alert going live
 * that a person already owns is triggered and acknowledged at once (it was
 * taken in shadow, so no acknowledgement of its own follows).
 */
export function pagerDutyActions(event: Pick<DeliveryInput['event'], 'kind' | 'actor' | 'data'>, alert: Pick<DeliveryInput['alert'], 'status' | 'ownerUser' | 'acknowledgedAt'>): { send: PagerDutyAction[] } | { skipped: string } {
  const action = pagerDutyAction(event);
  if (!action) return { skipped: `no PagerDuty action for ${event.kind}` };
  if (action !== 'resolve' && alert.status !== 'open') return { skipped: `the alert resolved before this ${action} could be sent: nobody is paged for it` };
  if (event.kind === 'went_live' && alert.ownerUser && alert.acknowledgedAt) return { send: ['trigger', 'acknowledge'] };
  return { send: [action] };
}

export function pagerDutyEvent(input: DeliveryInput, routingKey: string, dedupKey: string, action: PagerDutyAction, lastRun: LastRun | null, publicUrl?: string, audience: IncidentAudience = 'tenant') {
  const base = { routing_key: routingKey, event_action: action, dedup_key: dedupKey };
  if (action !== 'trigger') return base;
  const { alert: a, workflow: w, tenant: t } = input;
  const facts = alertFacts({ alert: a, workflow: w, tenant: t, event: input.event, lastRun, audience }, input.now);
  return {
    ...base,
    payload: {
      // The event's one text, as every other destination tells it.
      summary: cutText(`${t.name} / ${w.name}: ${facts.eventLine}`, 1024),
      source: `scheduler-bot/${t.id}`,
      severity: a.severity === 'critical' ? 'critical' : 'warning',
      timestamp: input.event.at.toISOString(),
      component: w.name,
      group: t.id,
      ...(a.errorGroup ? { class: a.errorGroup } : {}),
      custom_details: {
        Event: facts.eventLine,
        ...Object.fromEntries(facts.fields.map((f) => [f.label, f.value])),
        ...(a.lastError ? { 'Last error': cutText(a.lastError, 2000) } : {}),
        alert_id: a.id,
        generation: a.generation,
        event: input.event.kind,
      },
    },
    client: 'scheduler-bot',
    ...(publicUrl ? { client_url: publicUrl } : {}),
    ...(facts.logUrl ? { links: [{ href: facts.logUrl, text: 'Full log' }] } : {}),
  };
}

/**
 * PagerDuty Events API v2. Exactly once in effect comes from PagerDuty's own
 * dedup_key: a trigger, acknowledge or resolve sent twice for one alert
 * lands on the same incident, so a resend after an unknown outcome is safe.
 */
export function pagerDutyTransport(deps: { db: Db; config: RoutingConfig & Pick<Config, 'EVENTS_API_URL' | 'PUBLIC_URL'> }, options: { timeoutMs?: number; minIntervalMs?: number } = {}): Transport {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    kind: 'pagerduty',
    // PagerDuty limits events per routing key (about 120 a minute); the destination id is per routing key.
    pacing: { key: (destination) => destination, minIntervalMs: options.minIntervalMs ?? 500 },

    async deliver(input: DeliveryInput): Promise<DeliveryResult> {
      const plan = pagerDutyActions(input.event, input.alert);
      if ('skipped' in plan) return { kind: 'skipped', reason: plan.skipped };
      const dedupKey = await alertDedupKey(deps.db, input, deps.config.destinationIdKey);
      const spec = destinationSpecFor(input, deps.config, 'pagerduty');
      // Never another key's: a dedup_key is per service, and the incident is on the key it was triggered with.
      if (isResult(spec)) return spec.kind === 'permanent' ? { ...spec, error: `${spec.error}: PagerDuty incident ${dedupKey} stays open there; resolve it in PagerDuty` } : spec;
      const audience = audienceOf(input, deps.config);
      let status = 0;
      // In order, each safe to send again (the dedup_key): a failure after the trigger retries both.
      for (const action of plan.send) {
        const body = JSON.stringify(pagerDutyEvent(input, spec.routingKey, dedupKey, action, action === 'trigger' ? input.lastRun : null, deps.config.PUBLIC_URL, audience));
        const lease = await input.keepLease();
        if (!lease) return LEASE_LOST;
        const outcome = await postJson(deps.config.EVENTS_API_URL, body, { timeoutMs, now: input.now, tenantId: input.tenant.id, signal: lease });
        if (outcome.kind !== 'ok') return outcome;
        status = outcome.status;
      }
      const action = plan.send.join('+');
      // Whose key it is, kept with the incident: a tenant's thread never names the platform's (pagerduty-incident.ts).
      return { kind: 'sent', ref: dedupKey, result: { action, dedupKey, status, configuredBy: audience } };
    },
  };
}
