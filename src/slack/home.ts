import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';
import { renderHome } from './blocks/home.js';
import { homeModel } from './queries.js';
import type { SlackOutboxApi } from './slack-api.js';

/** Who counts as "opened it recently" for refreshes on state changes. */
const RECENT_VIEWERS_MS = 24 * 3_600_000;

export async function publishHome(deps: Pick<Deps, 'db' | 'logger'>, api: SlackOutboxApi, userId: string, now: Date): Promise<boolean> {
  const view = renderHome(await homeModel(deps.db, now), now);
  const result = await api.publishHome(userId, view);
  if (!result.ok) deps.logger.warn({ userId, error: result.error }, 'App Home publish failed');
  return result.ok;
}

/**
 * Re-publishes the App Home for recent viewers when alert state or dead
 * notifications changed since the last publish. The watermark is in memory:
 * after a restart everyone recent gets one refresh, which is harmless.
 */
export function createHomeRefresher(deps: Pick<Deps, 'db' | 'clock' | 'logger'>, api: SlackOutboxApi, options: { intervalMs?: number } = {}) {
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
    for (const v of viewers) await publishHome(deps, api, v.userId, now);
    seen = current;
    return false;
  }
  const loop: LoopSpec = { name: 'slack-home-refresher', intervalMs: options.intervalMs ?? 5000, tick };
  return { tick, loop };
}
