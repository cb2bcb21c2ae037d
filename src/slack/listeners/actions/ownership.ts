import type { App } from '@slack/bolt';
import { releaseOwnership, takeOwnership } from '../../../ledger/alert-actions.js';
import { ACTION } from '../../blocks/ids.js';
import { actionRefusal } from '../answers.js';
import { alertHere } from '../alert-here.js';
import type { SlackContext } from '../context.js';
import type { Scope } from '../../../ledger/alert-queries.js';
import type { ParsedAlertAction } from '../payloads.js';
import { alertAction, refuse } from './alert-action.js';

type Handler = (a: ParsedAlertAction & { scope: Scope }) => Promise<string | undefined>;

/** Take ownership, as the root's button and a storm message's menu both do it. */
export function takeHandler(ctx: SlackContext): Handler {
  return async (a) => {
    const found = await alertHere(ctx, a, 'take ownership');
    if ('refusal' in found) return found.refusal;
    const refusal = await refuse(ctx, a.user, 'take', found.tenant);
    if (refusal) return refusal;
    return actionRefusal(await takeOwnership(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope }));
  };
}

export function registerOwnershipActions(app: App, ctx: SlackContext): void {
  app.action(ACTION.takeOwnership, alertAction(ctx, ACTION.takeOwnership, takeHandler(ctx), { answerInPlace: true }));
  app.action(ACTION.keepOwnership, alertAction(ctx, ACTION.keepOwnership, takeHandler(ctx), { answerInPlace: 'reminder' }));
  app.action(ACTION.release, alertAction(ctx, ACTION.release, releaseHandler(ctx), { answerInPlace: true }));
}

/** Release ownership (someone else's needs the admin right). */
export function releaseHandler(ctx: SlackContext): Handler {
  return async (a) => {
      const found = await alertHere(ctx, a, 'release');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, 'release_own', found.tenant);
      if (refusal) return refusal;
      // Releasing someone else's ownership restarts escalation: that needs the admin right,
      // decided here and enforced by the service on the locked row (the owner may change meanwhile).
      const othersRefusal = await refuse(ctx, a.user, 'release_other', found.tenant);
      const result = await releaseOwnership(ctx.deps, { alertId: a.alertId, actor: { user: a.user, channel: a.channel }, scope: a.scope, mayReleaseOthers: !othersRefusal });
      if (result.kind === 'owned_by_other') return othersRefusal;
      return actionRefusal(result);
  };
}
