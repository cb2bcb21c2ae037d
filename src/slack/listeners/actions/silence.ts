import type { App } from '@slack/bolt';
import { silenceAction } from '../../../domain/rights.js';
import { silence, unsilence } from '../../../ledger/alert-actions.js';
import { ACTION, SILENCE_CHOICES } from '../../blocks/ids.js';
import { actionRefusal } from '../answers.js';
import { alertHere } from '../alert-here.js';
import type { SlackContext } from '../context.js';
import type { Scope } from '../../../ledger/alert-queries.js';
import type { ParsedAlertAction } from '../payloads.js';
import { alertAction, refuse } from './alert-action.js';

/** Silence for the chosen time (`a.choice`), as the root's select and a storm message's menu both do it. */
export function silenceHandler(ctx: SlackContext) {
  return async (a: ParsedAlertAction & { scope: Scope }): Promise<string | undefined> => {
      const choice = SILENCE_CHOICES.find((c) => c.choice === a.choice);
      if (!choice) return `Unknown silence choice ${JSON.stringify(a.choice ?? '')}; pick 1 hour, 4 hours, 24 hours or until resolved.`;
      const found = await alertHere(ctx, a, 'silence');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, silenceAction(choice.ms), found.tenant);
      if (refusal) return refusal;
      const until = choice.ms === null ? ('resolved' as const) : new Date(ctx.deps.clock.now().getTime() + choice.ms);
      // A click never replaces a silence in force: it lost a race, or its message was not re-rendered yet.
      return actionRefusal(await silence(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope, until, replace: false }));
  };
}

export function registerSilenceActions(app: App, ctx: SlackContext): void {
  app.action(ACTION.silence, alertAction(ctx, ACTION.silence, silenceHandler(ctx), { answerInPlace: true }));
  app.action(
    ACTION.unsilence,
    alertAction(ctx, ACTION.unsilence, async (a) => {
      const found = await alertHere(ctx, a, 'unsilence');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, 'unsilence', found.tenant);
      if (refusal) return refusal;
      return actionRefusal(await unsilence(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope }));
    }, { answerInPlace: true }),
  );
}
