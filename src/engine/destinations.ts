import type { Config } from '../config/env.js';
import type { Tenant } from '../db/schema.js';

/**
 * Where an alert's notifications go. The one place that decides it: the
 * tenant's channel, plus the platform channel when it is set and different.
 * (Email, webhook and PagerDuty destinations join here later.)
 */
export function destinationsFor(tenant: Pick<Tenant, 'channel'>, config: Pick<Config, 'PLATFORM_CHANNEL'>): string[] {
  const out: string[] = [];
  if (tenant.channel) out.push(`slack:${tenant.channel}`);
  const platform = config.PLATFORM_CHANNEL;
  if (platform && platform !== tenant.channel) out.push(`slack:${platform}`);
  return out;
}
