import type { App } from '@slack/bolt';
import { releaseOwnership, takeOwnership } from '../../../services/alert-actions.js';
import { ACTION } from '../../ids.js';
import { actionRefusal } from '../answers.js';
import type { SlackContext } from '../context.js';
import { alertAction } from './alert-action.js';

/** Take and release: the same click on one alert, answered the same way; only the service call differs. */
const OWNERSHIP_BUTTONS = [
  { actionId: ACTION.takeOwnership, what: 'take ownership', act: takeOwnership },
  { actionId: ACTION.release, what: 'release', act: releaseOwnership },
] as const;

export function registerOwnershipActions(app: App, ctx: SlackContext): void {
  for (const { actionId, what, act } of OWNERSHIP_BUTTONS) {
    app.action(
      actionId,
      alertAction(ctx, actionId, async (a) => {
        const result = await act(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope });
        if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, `refused ${what}: alert not in this channel's scope`);
        return actionRefusal(result);
      }),
    );
  }
}
