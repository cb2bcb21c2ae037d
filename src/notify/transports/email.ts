import nodemailer from 'nodemailer';
import type { Config } from '../../config/env.js';
import type { Db } from '../../db/connect.js';
import type { Severity } from '../../db/schema.js';
import type { RoutingConfig } from '../../ledger/destinations.js';
import { LEASE_LOST, type DeliveryInput, type DeliveryResult, type Transport } from '../transport.js';
import { alertFacts } from './alert-facts.js';
import { audienceOf, destinationSpecFor, isResult, threadRootOf } from './delivery-context.js';
import { domainOf, messageIdFor, renderAlertEmail } from './email-message.js';

/** What the transport needs to hand a message to SMTP; nodemailer in production. */
export interface MailSender {
  /** `message.signal` (an AbortSignal) ends the SMTP conversation early, the connection closed. */
  sendMail(message: Record<string, unknown>): Promise<unknown>;
}

export interface EmailOptions {
  /** Socket timeouts for one SMTP conversation. */
  timeoutMs?: number;
  minIntervalMs?: number;
}

export function smtpSender(url: string, o: EmailOptions = {}): MailSender {
  const t = o.timeoutMs ?? 30_000;
  return nodemailer.createTransport({ url, connectionTimeout: t, greetingTimeout: t, socketTimeout: t } as Parameters<typeof nodemailer.createTransport>[0]);
}

/**
 * Email over SMTP: one thread per alert and destination. The destination's
 * first message carries the thread's Message-ID; every later one refers to it
 * (In-Reply-To, References) and keeps its subject. SMTP cannot be asked
 * whether an earlier attempt arrived, so there is no lookup: a resend after
 * an unknown outcome carries the same Message-ID and idempotency header,
 * derived from the key, and receivers deduplicate on it (see docs/destinations.md).
 */
export function emailTransport(
  deps: { db: Db; config: RoutingConfig & Pick<Config, 'SMTP_URL' | 'SMTP_FROM'> },
  options: EmailOptions & { mailer?: MailSender } = {},
): Transport {
  const mailer = options.mailer ?? (deps.config.SMTP_URL ? smtpSender(deps.config.SMTP_URL, options) : undefined);
  const domain = domainOf(deps.config.SMTP_FROM);
  return {
    kind: 'email',
    pacing: { key: (destination) => destination, minIntervalMs: options.minIntervalMs ?? 200 },

    async deliver(input: DeliveryInput): Promise<DeliveryResult> {
      const spec = destinationSpecFor(input, deps.config, 'email');
      if (isResult(spec)) return spec;
      if (!mailer) return { kind: 'permanent', error: 'an email destination is configured but SMTP_URL is not set' };
      const n = input.notification;
      const root = await threadRootOf(deps.db, n.alertId, n.destination);
      const isRoot = !root || root.notificationId === n.id;
      const threadSeverity = severityAt(input, root?.eventAt ?? input.event.at);
      const facts = alertFacts({ alert: input.alert, workflow: input.workflow, tenant: input.tenant, event: input.event, lastRun: input.lastRun, audience: audienceOf(input, deps.config) }, input.now);
      const message = renderAlertEmail({
        facts,
        tenantName: input.tenant.name,
        workflowName: input.workflow.name,
        alertId: input.alert.id,
        event: input.event.kind,
        idempotencyKey: n.idempotencyKey,
        ...(isRoot ? {} : { rootMessageId: messageIdFor(root.idempotencyKey, domain) }),
        threadSeverity,
        domain,
      });
      // The socket timeouts bound each pause, not the whole conversation: a server trickling its
      // answers could hold a send past the lease, while another replica sends the row again.
      // The lease's signal cuts the conversation off before the lease ends (nodemailer closes it).
      const lease = await input.keepLease();
      if (!lease) return LEASE_LOST;
      try {
        await mailer.sendMail({ from: deps.config.SMTP_FROM, to: spec.to, ...message, signal: lease });
        return { kind: 'sent', ref: message.messageId, result: { messageId: message.messageId, ...(message.inReplyTo ? { inReplyTo: message.inReplyTo } : {}) } };
      } catch (error) {
        const outcome = classifySmtpError(error);
        // Cut off mid-conversation: the server may have taken the message (a resend carries the same Message-ID).
        if (lease.aborted && outcome.kind !== 'sent' && 'error' in outcome) return { kind: 'unknown', error: `${(lease.reason as Error).message} (${outcome.error})` };
        return outcome;
      }
    },
  };
}

/** The alert's severity at `at`: severity only ever rises, once, at escalatedAt. */
function severityAt(input: DeliveryInput, at: Date): Severity {
  const escalatedAt = input.alert.escalatedAt;
  if (!escalatedAt) return input.alert.severity;
  return at.getTime() < escalatedAt.getTime() ? 'warning' : 'critical';
}

/**
 * SMTP replies are classified by code: 5xx will not work as sent (unknown
 * mailbox, refused sender), 4xx is "try later". Without a reply the
 * connection broke somewhere, possibly after the server took the message, so
 * the outcome is unknown, except when it never connected at all.
 */
export function classifySmtpError(error: unknown): DeliveryResult {
  const e = error as { responseCode?: number; code?: string; message?: string; response?: string };
  const message = `${e.code ? `${e.code}: ` : ''}${e.response ?? e.message ?? String(error)}`;
  // Authentication refused (535 and the like): SMTP_URL's credentials, not the message; held like a revoked token.
  if (e.code === 'EAUTH') return { kind: 'credentials', error: message };
  if (typeof e.responseCode === 'number') {
    if (e.responseCode >= 500) return { kind: 'permanent', error: message };
    return { kind: 'transient', error: message };
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH/.test(`${e.code ?? ''} ${e.message ?? ''}`)) return { kind: 'transient', error: message };
  return { kind: 'unknown', error: message };
}
