import type { App } from '@slack/bolt';
import { silence, unsilence } from '../../../services/alert-actions.js';
import { ACTION, SILENCE_CHOICES } from '../../ids.js';
import { mayReassignOrSilence, NOT_ADMIN_TEXT } from '../../tenancy.js';
import { actionRefusal } from '../answers.js';
import type { SlackContext } from '../context.js';
import { alertAction } from './alert-action.js';

export function registerSilenceActions(app: App, ctx: SlackContext): void {
  app.action(
    ACTION.silence,
    alertAction(ctx, ACTION.silence, async (a) => {
      if (!mayReassignOrSilence(ctx.deps.config, a.user)) return NOT_ADMIN_TEXT;
      const choice = SILENCE_CHOICES.find((c) => c.choice === a.choice);
      if (!choice) return `Unknown silence choice ${JSON.stringify(a.choice ?? '')}; pick 1 hour, 4 hours, 24 hours or until resolved.`;
      const until = choice.ms === null ? ('resolved' as const) : new Date(ctx.deps.clock.now().getTime() + choice.ms);
      const result = await silence(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope, until });
      if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, 'refused silence: alert not in scope');
      return actionRefusal(result);
    }),
  );
  app.action(
    ACTION.unsilence,
    alertAction(ctx, ACTION.unsilence, async (a) => {
      if (!mayReassignOrSilence(ctx.deps.config, a.user)) return NOT_ADMIN_TEXT;
      const result = await unsilence(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope });
      if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, 'refused unsilence: alert not in scope');
      return actionRefusal(result);
    }),
  );
}
