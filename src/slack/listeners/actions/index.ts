import type { App } from '@slack/bolt';
import type { SlackContext } from '../context.js';
import { registerHistoryAction } from './history.js';
import { registerOwnershipActions } from './ownership.js';
import { registerReassignAction } from './reassign.js';
import { registerResolveAction } from './resolve.js';
import { registerRunNowAction } from './run-now.js';
import { registerSilenceActions } from './silence.js';
import { registerStormMenuAction } from './storm-menu.js';

export function registerActions(app: App, ctx: SlackContext): void {
  registerOwnershipActions(app, ctx);
  registerReassignAction(app, ctx);
  registerResolveAction(app, ctx);
  registerSilenceActions(app, ctx);
  registerRunNowAction(app, ctx);
  registerHistoryAction(app, ctx);
  registerStormMenuAction(app, ctx);
}
