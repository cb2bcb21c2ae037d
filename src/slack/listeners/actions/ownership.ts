import type { App } from '@slack/bolt';
import { releaseOwnership, takeOwnership } from '../../../services/alert-actions.js';
import { ACTION } from '../../ids.js';
import { actionRefusal } from '../answers.js';
import type { SlackContext } from '../context.js';
import { alertAction } from './alert-action.js';

export function registerOwnershipActions(app: App, ctx: SlackContext): void {
  app.action(
    ACTION.takeOwnership,
    alertAction(ctx, ACTION.takeOwnership, async (a) => {
      const result = await takeOwnership(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope });
      if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, 'refused take ownership: alert not in this channel\'s scope');
      return actionRefusal(result);
    }),
  );
  app.action(
    ACTION.release,
    alertAction(ctx, ACTION.release, async (a) => {
      const result = await releaseOwnership(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope });
      if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, 'refused release: alert not in this channel\'s scope');
      return actionRefusal(result);
    }),
  );
}
