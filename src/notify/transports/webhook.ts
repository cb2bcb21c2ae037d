import type { Config } from '../../config/env.js';
import type { Db } from '../../db/connect.js';
import { webhookHost } from '../../domain/destination-outage.js';
import { webhookRequestHeaders } from '../../domain/webhook-headers.js';
import { silenceState, silencedUntilField } from '../../domain/silence.js';
import type { RoutingConfig } from '../../ledger/destinations.js';
import { SIGNATURE_HEADER, signLaunchRequest, TIMESTAMP_HEADER } from '../../launch/signature.js';
import { type DeliveryInput, type DeliveryResult, type LastRun, type Transport, LEASE_LOST } from '../transport.js';
import { eventTextFields } from '../event-text.js';
import { alertFacts } from './alert-facts.js';
import { audienceOf, destinationSpecFor, isResult } from './delivery-context.js';
import { eventDataFor, type IncidentAudience } from '../../domain/pagerduty-incident.js';
import { postJson } from './post-json.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const EVENT_HEADER = 'X-Scheduler-Event';

export interface WebhookOptions {
  timeoutMs?: number;
  minIntervalMs?: number;
}

/**
 * The JSON body of one webhook delivery: the event and the alert as it is now.
 * A stable, documented shape (docs/destinations.md, "Webhook receivers"); add fields, never rename.
 */
export function webhookPayload(input: DeliveryInput, lastRun: LastRun | null, publicUrl: string | undefined, audience: IncidentAudience = 'tenant') {
  const { alert: a, workflow: w, tenant: t, event: e, notification: n } = input;
  const facts = alertFacts({ alert: a, workflow: w, tenant: t, event: e, lastRun, audience }, input.now);
  const base = publicUrl?.replace(/\/+$/, '');
  return {
    idempotencyKey: n.idempotencyKey,
    event: e.kind,
    eventId: e.id,
    at: e.at.toISOString(),
    actor: e.actor,
    summary: `${facts.headline}. ${facts.eventLine}`,
    /** The event's one text as fields: the same parts Slack, email and PagerDuty render. */
    text: eventTextFields(facts.eventText),
    alert: {
      id: a.id,
      generation: a.generation,
      status: a.status,
      severity: a.severity,
      openedAt: a.openedAt.toISOString(),
      escalatedAt: a.escalatedAt?.toISOString() ?? null,
      resolvedAt: a.resolvedAt?.toISOString() ?? null,
      consecutiveFailures: a.consecutiveFailures,
      lastError: a.lastError,
      stage: a.stage ?? lastRun?.stage ?? null,
      errorGroup: a.errorGroup
        ? { id: a.errorGroup, count: a.errorGroupCount, firstAt: a.errorGroupFirstAt?.toISOString() ?? null, lastAt: a.errorGroupLastAt?.toISOString() ?? null }
        : null,
      owner: { team: a.ownerTeam, user: a.ownerUser, note: a.ownerNote, acknowledgedAt: a.acknowledgedAt?.toISOString() ?? null },
      // Only a silence in force at delivery: a resolved alert or an expired silence reports null.
      silencedUntil: silencedUntilField(silenceState(a, input.now)),
    },
    tenant: { id: t.id, name: t.name },
    workflow: { id: w.id, name: w.name, cron: w.cron, timezone: w.timezone },
    data: eventDataFor(audience, e.data),
    links: {
      log: facts.logUrl ?? null,
      workflow: base ? `${base}/api/v1/workflows/${encodeURIComponent(t.id)}/${encodeURIComponent(w.name)}` : null,
    },
  };
}

/**
 * Signed JSON POSTs. The signature is the launcher's scheme (HMAC-SHA256 of
 * `timestamp.body` with the destination's secret), so one verification
 * snippet serves both. Every attempt of a row carries the same
 * Idempotency-Key; the timestamp is the attempt's, so a retry is not stale.
 */
export function webhookTransport(deps: { db: Db; config: RoutingConfig & Pick<Config, 'PUBLIC_URL'> }, options: WebhookOptions = {}): Transport {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    kind: 'webhook',
    // Paced per receiving host: one slow or rate-limiting receiver holds back only itself.
    pacing: { key: (destination) => `webhook:${webhookHost(destination)}`, minIntervalMs: options.minIntervalMs ?? 100 },

    async deliver(input: DeliveryInput): Promise<DeliveryResult> {
      const spec = destinationSpecFor(input, deps.config, 'webhook');
      if (isResult(spec)) return spec;
      const body = JSON.stringify(webhookPayload(input, input.lastRun, deps.config.PUBLIC_URL, audienceOf(input, deps.config)));
      const timestamp = Math.floor(input.now.getTime() / 1000);
      const lease = await input.keepLease();
      if (!lease) return LEASE_LOST;
      const outcome = await postJson(spec.url, body, {
        // The configured headers never join the bot's: one differing only in case is left out (a row stored before the config refused it).
        headers: webhookRequestHeaders(spec.headers, {
          [IDEMPOTENCY_KEY_HEADER]: input.notification.idempotencyKey,
          [EVENT_HEADER]: input.event.kind,
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signLaunchRequest(spec.secret, timestamp, body),
        }),
        timeoutMs,
        now: input.now,
        tenantId: input.tenant.id,
        signal: lease,
      });
      if (outcome.kind !== 'ok') return outcome;
      return { kind: 'sent', ref: `HTTP ${outcome.status}`, result: { status: outcome.status } };
    },
  };
}
