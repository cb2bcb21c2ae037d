import type { Config } from '../../config/env.js';
import type { Db } from '../../db/connect.js';
import type { Tenant } from '../../db/schema.js';
import type { Scope } from '../../ledger/alert-queries.js';
import { seesShadowAlerts } from '../../domain/rights.js';
import type { SlackDirectory } from '../transport/directory.js';

/**
 * Which workflows a Slack surface may see and touch. A tenant's channel: that
 * tenant only. The platform channel and the App Home: everything. Any other
 * channel: nothing (the bot says so politely).
 */
export type SlackScope =
  | { kind: 'tenant'; tenant: Tenant; scope: Scope; label: string }
  | { kind: 'platform'; scope: Scope; label: string }
  | { kind: 'unlinked'; channel: string | undefined };

export async function scopeForChannel(db: Db, config: Pick<Config, 'PLATFORM_CHANNEL'>, channel: string | undefined): Promise<SlackScope> {
  if (channel && config.PLATFORM_CHANNEL && channel === config.PLATFORM_CHANNEL) return { kind: 'platform', scope: {}, label: 'every tenant' };
  if (!channel) return { kind: 'unlinked', channel };
  // At most one enabled tenant holds a channel (the partial unique index tenants_channel; src/domain/tenant-channels.ts);
  // ordered anyway, so the answer never depends on the heap.
  const tenant = await db.selectFrom('tenants').selectAll().where('channel', '=', channel).where('enabled', '=', true).orderBy('id').limit(1).executeTakeFirst();
  if (!tenant) return { kind: 'unlinked', channel };
  return { kind: 'tenant', tenant, scope: { tenantId: tenant.id }, label: tenant.name };
}

export const UNLINKED_TEXT =
  "This channel isn't linked to a tenant, so I can't show or change any workflows here. Use your tenant's channel, the platform channel, or my App Home.";

/**
 * Whether a command's answer may show alerts in shadow: the App Home's rule (src/domain/rights.ts
 * seesShadowAlerts). In the platform channel the asker is a member; in a tenant's channel only a member of
 * the platform channel or a global admin is told of them, privately.
 */
export async function seesShadowHere(
  where: Pick<Exclude<SlackScope, { kind: 'unlinked' }>, 'kind'>,
  user: string,
  config: Pick<Config, 'PLATFORM_CHANNEL' | 'ADMIN_USERS'>,
  directory: SlackDirectory | undefined,
): Promise<boolean> {
  const platform = config.PLATFORM_CHANNEL;
  const platformMember = where.kind === 'platform' || (!!platform && !!directory && (await directory.isChannelMember(platform, user)));
  return seesShadowAlerts({ user, platformMember }, config.ADMIN_USERS);
}
