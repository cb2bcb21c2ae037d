import type { Deps } from '../../deps.js';
import type { LoopSpec } from '../../engine/runner.js';
import { seesShadowAlerts, visibleTenants } from '../../domain/rights.js';
import { renderHome } from '../blocks/home.js';
import type { SlackDirectory } from '../transport/directory.js';
import { homeModel } from './queries.js';
import type { SlackOutboxApi } from '../transport/slack-api.js';

/** Who counts as "opened it recently" for refreshes on state changes. */
const RECENT_VIEWERS_MS = 24 * 3_600_000;

/**
 * The viewer's App Home: only the tenants whose channel they are in or that
 * they administer (everything for ADMIN_USERS and the platform channel's
 * members), decided by src/domain/rights.ts from Slack's membership lists.
 */
export async function publishHome(
  deps: Pick<Deps, 'db' | 'logger' | 'config'>,
  api: SlackOutboxApi,
  directory: SlackDirectory | undefined,
  userId: string,
  now: Date,
): Promise<boolean> {
  const tenants = await deps.db.selectFrom('tenants').select(['id', 'channel', 'rights']).where('enabled', '=', true).orderBy('id').execute();
  const channels = new Set<string>();
  for (const t of tenants) if (t.channel && directory && (await directory.isChannelMember(t.channel, userId))) channels.add(t.channel);
  const platform = deps.config.PLATFORM_CHANNEL;
  const platformMember = !!platform && !!directory && (await directory.isChannelMember(platform, userId));
  const groupsNamed = tenants.flatMap((t) => t.rights.admins ?? []).filter((id) => id.startsWith('S'));
  const userGroups = directory && groupsNamed.length ? (await directory.groupsOf(userId, groupsNamed)).member : [];
  const visible = visibleTenants(tenants, { user: userId, userGroups, channels, platformMember }, deps.config.ADMIN_USERS);
  const shadow = seesShadowAlerts({ user: userId, platformMember }, deps.config.ADMIN_USERS);
  // The platform's viewers see everything; anyone else, not the platform's own destinations (their failures, errors and keys).
  const view = renderHome(await homeModel(deps.db, now, visible, userId, { shadow, ...(shadow ? {} : { tenantView: deps.config }) }), now);
  const result = await api.publishHome(userId, view);
  if (!result.ok) deps.logger.warn({ userId, error: result.error }, 'App Home publish failed');
  return result.ok;
}

/**
 * Re-publishes the App Home for recent viewers when alert state or dead
 * notifications changed since the last publish. The watermark is in memory:
 * after a restart everyone recent gets one refresh, which is harmless.
 */
export function createHomeRefresher(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'config'>, api: SlackOutboxApi, directory?: SlackDirectory, options: { intervalMs?: number } = {}) {
  let seen: string | undefined;
  async function tick(): Promise<boolean> {
    const now = deps.clock.now();
    const mark = await deps.db
      .selectFrom('alertEvents')
      .select((eb) => eb.fn.max('id').as('events'))
      .executeTakeFirst();
    const dead = await deps.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'dead')
      .executeTakeFirstOrThrow();
    const current = `${mark?.events ?? 0}:${dead.n}`;
    if (current === seen) return false;
    const viewers = await deps.db
      .selectFrom('slackHomeViews')
      .select('userId')
      .where('openedAt', '>', new Date(now.getTime() - RECENT_VIEWERS_MS))
      .orderBy('openedAt', 'desc')
      .limit(50)
      .execute();
    for (const v of viewers) await publishHome(deps, api, directory, v.userId, now);
    seen = current;
    return false;
  }
  const loop: LoopSpec = { name: 'slack-home-refresher', intervalMs: options.intervalMs ?? 5000, tick };
  return { tick, loop };
}
