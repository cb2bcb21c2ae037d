import type { App } from '@slack/bolt';
import { renderResolveModal } from '../../blocks/resolve-modal.js';
import { ACTION } from '../../blocks/ids.js';
import { alertHere } from '../alert-here.js';
import type { SlackContext } from '../context.js';
import type { Scope } from '../../../ledger/alert-queries.js';
import type { ParsedAlertAction } from '../payloads.js';
import { alertAction, openModal, refuse, type ActionArgs } from './alert-action.js';

/** Opens the resolve modal (a note is required); the submission (views/resolve-submit.ts) closes the alert. */
export function registerResolveAction(app: App, ctx: SlackContext): void {
  app.action(ACTION.resolve, alertAction(ctx, ACTION.resolve, resolveHandler(ctx)));
}

/**
 * Opens the resolve modal, from a root's button or a storm message's menu
 * (`a.messageTs` is the root to update at once on success; a storm message
 * passes none: the storm refresher re-renders it).
 */
export function resolveHandler(ctx: SlackContext) {
  return async (a: ParsedAlertAction & { scope: Scope }, args: Pick<ActionArgs, 'client'>): Promise<string | undefined> => {
      const found = await alertHere(ctx, a, 'resolve');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, 'resolve', found.tenant);
      if (refusal) return refusal;
      if (found.alert.status !== 'open') return 'This alert is already resolved; nothing to resolve.';
      if (!a.triggerId || !a.channel) return 'Slack sent no trigger id or channel, so I cannot open the form; try again from the alert in its channel.';
      const view = renderResolveModal({ alertId: a.alertId, workflowName: found.workflow.name, tenantName: found.tenant.name, channel: a.channel, messageTs: a.messageTs ?? null });
      await openModal(args, a.triggerId, view);
      return undefined;
  };
}
