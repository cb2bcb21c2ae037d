import type { App } from '@slack/bolt';
import { renderReassignModal } from '../../blocks/reassign-modal.js';
import { ACTION } from '../../blocks/ids.js';
import { alertHere } from '../alert-here.js';
import type { SlackContext } from '../context.js';
import { alertAction, openModal, refuse } from './alert-action.js';

/** Opens the reassign modal; the submission (views/reassign-submit.ts) does the change. */
export function registerReassignAction(app: App, ctx: SlackContext): void {
  app.action(
    ACTION.reassign,
    alertAction(ctx, ACTION.reassign, async (a, args) => {
      const found = await alertHere(ctx, a, 'reassign');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, 'reassign', found.tenant);
      if (refusal) return refusal;
      if (found.alert.status !== 'open') return 'This alert is already resolved; nothing to reassign.';
      if (!a.triggerId || !a.channel) return 'Slack sent no trigger id or channel, so I cannot open the form; try again from the alert in its channel.';
      const view = renderReassignModal({
        alertId: a.alertId,
        workflowName: found.workflow.name,
        tenantName: found.tenant.name,
        ownerTeam: found.alert.ownerTeam,
        ownerUser: found.alert.ownerUser,
        ownerNote: found.alert.ownerNote,
        channel: a.channel,
        messageTs: a.messageTs ?? null,
      });
      await openModal(args, a.triggerId, view);
      return undefined;
    }),
  );
}
