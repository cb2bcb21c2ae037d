import type { App } from '@slack/bolt';
import { renderHistory } from '../../blocks/history.js';
import { ACTION } from '../../blocks/ids.js';
import { alertInScope, historyRows } from '../../views/queries.js';
import { NOT_FOUND_TEXT } from '../answers.js';
import type { SlackContext } from '../context.js';
import { alertAction } from './alert-action.js';

export function registerHistoryAction(app: App, ctx: SlackContext): void {
  app.action(
    ACTION.history,
    alertAction(ctx, ACTION.history, async (a, args) => {
      const found = await alertInScope(ctx.deps.db, a.alertId, a.scope);
      if (!found) {
        ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, 'refused history: alert not in scope');
        return NOT_FOUND_TEXT;
      }
      const message = renderHistory(found.workflow.name, await historyRows(ctx.deps.db, found.workflow.id, 15));
      await args.respond({ response_type: 'ephemeral', replace_original: false, ...message });
      return undefined;
    }),
  );
}
