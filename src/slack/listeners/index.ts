import type { App } from '@slack/bolt';
import { registerActions } from './actions/index.js';
import { registerSchedulerCommand } from './commands/scheduler.js';
import type { SlackContext } from './context.js';
import { registerAppHomeOpened } from './events/app-home-opened.js';
import { registerReassignSubmit } from './views/reassign-submit.js';
import { registerResolveSubmit } from './views/resolve-submit.js';
import { dropSlackRetries } from './retries.js';

export function registerListeners(app: App, ctx: SlackContext): void {
  dropSlackRetries(app, ctx.deps.logger);
  registerActions(app, ctx);
  registerReassignSubmit(app, ctx);
  registerResolveSubmit(app, ctx);
  registerSchedulerCommand(app, ctx);
  registerAppHomeOpened(app, ctx);
}
