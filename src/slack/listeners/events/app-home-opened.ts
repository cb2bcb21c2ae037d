import type { App } from '@slack/bolt';
import { publishHome } from '../../views/home.js';
import type { SlackContext } from '../context.js';

/** Records who looks at the Home tab (so state changes refresh it for them) and publishes it fresh. */
export function registerAppHomeOpened(app: App, ctx: SlackContext): void {
  app.event('app_home_opened', async ({ event }) => {
    if (event.tab !== 'home') return;
    const now = ctx.deps.clock.now();
    await ctx.deps.db
      .insertInto('slackHomeViews')
      .values({ userId: event.user, openedAt: now })
      .onConflict((oc) => oc.column('userId').doUpdateSet({ openedAt: now }))
      .execute();
    await publishHome(ctx.deps, ctx.api, ctx.directory, event.user, now);
  });
}
