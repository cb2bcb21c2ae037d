import type { Config } from '../../config/env.js';
import type { Db } from '../../db/connect.js';
import type { Transport } from '../transport.js';
import { emailTransport, type MailSender } from './email.js';
import { pagerDutyTransport } from './pagerduty.js';
import { webhookTransport } from './webhook.js';

export interface DestinationTransportOptions {
  /** Replaces the SMTP connection (tests). */
  mailer?: MailSender;
  /** Per-request timeout for SMTP, webhooks and PagerDuty. */
  timeoutMs?: number;
}

/**
 * The transports for destinations beyond Slack, for the outbox sender to
 * resolve by kind. Always all three: a destination whose transport cannot
 * work as configured (email without SMTP_URL) goes dead with a reason that
 * shows on the App Home, rather than waiting unclaimed.
 */
export function destinationTransports(
  deps: { db: Db; config: Pick<Config, 'PLATFORM_CHANNEL' | 'PLATFORM_DESTINATIONS' | 'SMTP_URL' | 'SMTP_FROM' | 'PUBLIC_URL' | 'EVENTS_API_URL'> },
  options: DestinationTransportOptions = {},
): Transport[] {
  const timeouts = options.timeoutMs ? { timeoutMs: options.timeoutMs } : {};
  return [
    emailTransport(deps, { ...timeouts, ...(options.mailer ? { mailer: options.mailer } : {}) }),
    webhookTransport(deps, timeouts),
    pagerDutyTransport(deps, timeouts),
  ];
}
